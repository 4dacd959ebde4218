// Pinyin in fill(): blanks constrained by sound or tone class ([MASK:shang4], 【MASK：平】, the
// `constraints` option) and the readings on candidates, checked against independent references:
// onnxruntime-node's probabilities renormalised over the characters whose readings, parsed from
// Unihan in Python (tests/harness/unihan-reference.mjs), meet the constraint.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillMaskModel } from '../../web/src/index.js';
import { unihanReadings, unihanStandardReadings, withToneMark } from '../harness/unihan-reference.mjs';
import { cli } from './cli-run.js';
import { type Reference, api, missingPrerequisite, openTinyModel, rejection, type TinyModelSetup } from './fixtures.js';

const missing = missingPrerequisite();

/** Whether a numbered reading ("shang4") meets a constraint as the docs define it. */
function meets(reading: string, constraint: string): boolean {
  const tone = Number(reading.slice(-1));
  if (constraint === '平') return tone === 1 || tone === 2;
  if (constraint === '仄') return tone === 3 || tone === 4;
  return /\d$/.test(constraint) ? reading === constraint : reading.slice(0, -1) === constraint;
}

/** Token ids a constraint admits: one character with a Unihan reading meeting it. */
function admitted(ref: Reference, size: number, constraint: string): Set<number> {
  const readings = unihanReadings();
  const ids = new Set<number>();
  for (let id = 0; id < size; id++) {
    const token = ref.token(id);
    if ([...token].length === 1 && (readings.get(token) ?? []).some((r) => meets(r, constraint))) ids.add(id);
  }
  return ids;
}

describe.skipIf(missing !== null)('sound constraints with the tiny model', () => {
  let setup: TinyModelSetup;
  let ref: Reference;
  let native: FillMaskModel;
  let vocabSize: number;

  beforeAll(async () => {
    setup = await openTinyModel();
    ({ ref, native } = setup);
    vocabSize = native.stats().model.vocabSize;
  });
  afterAll(() => setup?.dispose());

  test('a constrained blank is the reference renormalised over the characters that sound so', async () => {
    const text = '床前明月光，疑是地[MASK]霜。';
    const [row] = await ref.probabilities(text);
    for (const constraint of ['shang', 'shuang1', '平', '仄']) {
      const ids = admitted(ref, vocabSize, constraint);
      expect(ids.size, constraint).toBeGreaterThan(0);
      const mass = [...ids].filter((id) => ref.eligible(id)).reduce((sum, id) => sum + row![id]!, 0);
      const renormalised = row!.map((p, id) => (ids.has(id) ? p / mass : 0));
      const expected = ref.topK(renormalised, 8, (id) => ids.has(id));
      const result = await native.fill(text.replace('[MASK]', `[MASK:${constraint}]`), { topK: 8, memory: false });
      const [mask] = result.masks;
      expect(
        mask!.candidates.map((c) => c.token),
        constraint,
      ).toEqual(expected.map((e) => e.token));
      mask!.candidates.forEach((c, k) => expect(c.score).toBeCloseTo(expected[k]!.p, 5));
      const shown = mask!.candidates.reduce((sum, c) => sum + c.score, 0);
      expect(mask!.other).toBeCloseTo(Math.max(0, 1 - shown), 5);
      expect(result.text.slice(mask!.start, mask!.end)).toBe(`[MASK:${constraint}]`);
    }
  });

  test('every spelling of a constraint, in the text or as an option, gives the same result', async () => {
    const spellings = [
      '疑是地[MASK:shang4]霜',
      '疑是地[mask:shàng]霜',
      '疑是地［MASK：SHANG4］霜',
      '疑是地【MASK:shàng】霜',
      '疑是地[MASK: shang4 ]霜',
    ];
    const results = await Promise.all(spellings.map((text) => native.fill(text, { memory: false })));
    const viaOption = await native.fill('疑是地[MASK]霜', { memory: false, constraints: ['shang4'] });
    for (const result of [...results, viaOption]) {
      expect(result.masks[0]!.constraint).toBe('shàng');
      expect(result.masks[0]!.candidates.map((c) => [c.token, c.score])).toEqual(
        viaOption.masks[0]!.candidates.map((c) => [c.token, c.score]),
      );
    }
    expect(results[0]!.masks[0]!.end - results[0]!.masks[0]!.start).toBe('[MASK:shang4]'.length);
  });

  test('constrained and plain results are cached apart', async () => {
    const plain = await native.fill('春眠不觉[MASK]', { memory: false });
    const constrained = await native.fill('春眠不觉[MASK]', { memory: false, constraints: ['xiao3'] });
    const again = await native.fill('春眠不觉[MASK:xiao3]', { memory: false });
    expect(plain.masks[0]!.constraint).toBeUndefined();
    expect(constrained.cached).toBe(false);
    expect(again.cached).toBe(true);
    expect(again.masks[0]!.candidates).toEqual(constrained.masks[0]!.candidates);
    expect(constrained.masks[0]!.candidates.map((c) => c.token)).not.toEqual(
      plain.masks[0]!.candidates.map((c) => c.token),
    );
  });

  test('the memory is constrained too', async () => {
    const { createFillMask } = await api();
    const { testMemoryModelDir } = await import('./fixtures.js');
    const tk = await createFillMask({ model: testMemoryModelDir(), backend: 'auto', threads: 1 });
    try {
      // The memory knows 疑是地上霜; a blank that must read xia4 cannot be 上.
      const free = await tk.fill('床前明月光，疑是地[MASK]霜。');
      expect(free.masks[0]!.candidates[0]!.token).toBe('上');
      const other = await tk.fill('床前明月光，疑是地[MASK:xia4]霜。', { topK: 20 });
      const ids = admitted(ref, vocabSize, 'xia4');
      for (const c of other.masks[0]!.candidates) expect(ids.has(ref.tokenId(c.token)), c.token).toBe(true);
      expect(other.masks[0]!.candidates.every((c) => c.source === undefined)).toBe(true);
    } finally {
      await tk.dispose();
    }
  });

  test('joint words follow each blank’s constraint', async () => {
    const result = await native.fill('掩耳[MASK:dao4][MASK:平]。', { joint: true, beam: 4, topK: 4, memory: false });
    const dao = admitted(ref, vocabSize, 'dao4');
    const ping = admitted(ref, vocabSize, '平');
    const [word] = result.words!;
    expect(word!.candidates.length).toBeGreaterThan(0);
    for (const candidate of word!.candidates) {
      expect(dao.has(ref.tokenId(candidate.tokens[0]!)), candidate.text).toBe(true);
      expect(ping.has(ref.tokenId(candidate.tokens[1]!)), candidate.text).toBe(true);
      expect(candidate.pinyin).toHaveLength(2);
      expect(candidate.pinyin[0]).toMatch(/^dào$/);
    }
  });

  test('candidates carry their readings, likeliest first, as Unihan has them', async () => {
    const readings = unihanReadings();
    const result = await native.fill('床前明月[MASK]，[MASK]是地上霜。', { topK: 20, memory: false });
    let checked = 0;
    for (const mask of result.masks) {
      for (const c of mask.candidates) {
        expect(c.pinyin).toEqual((readings.get(c.token) ?? []).map(withToneMark));
        checked += c.pinyin.length > 0 ? 1 : 0;
      }
    }
    expect(checked).toBeGreaterThan(10);
    // With a constraint, the reading that meets it comes first (行: xíng before háng).
    const hang = await native.fill('银[MASK:hang2]', { topK: 50, memory: false });
    const xing = hang.masks[0]!.candidates.find((c) => c.token === '行');
    if (xing) expect(xing.pinyin[0]).toBe('háng');
  });

  test('readings(): each character’s standard readings and tone class, as Unihan has them', async () => {
    const standard = unihanStandardReadings();
    // Written here from the docs: 1-2 平, 3-4 仄, 5 轻声; a polyphone has readings in both.
    const toneOf = (reading: string) => ({ 1: '平', 2: '平', 3: '仄', 4: '仄' })[reading.slice(-1)] ?? '轻声';
    const text = '一看不行，春风又绿江南岸！Hi 😀 2024 的\uD800了';
    for (const model of [native, setup.wasm]) {
      const result = await model.readings(text);
      expect(result.text).toBe(text.replace('\uD800', '\uFFFD'));
      const expected = [...result.text.matchAll(/./gsu)]
        .filter((m) => (standard.get(m[0]) ?? []).length > 0)
        .map((m) => {
          const readings = standard.get(m[0])!;
          const classes = new Set(readings.map(toneOf));
          return {
            char: m[0],
            start: m.index,
            end: m.index + m[0].length,
            pinyin: readings.map(withToneMark),
            tone: readings.map(toneOf).find((c) => c !== '轻声') ?? '轻声',
            polyphone: classes.has('平') && classes.has('仄'),
          };
        });
      expect(result.chars).toEqual(expected);
    }
    const { chars } = await native.readings('仙看不们');
    // The likeliest readings of 仙 and 们 are neutral (神仙, 我们): their class is xiān's and mén's;
    // 看 kàn/kān is a polyphone; 不's classical fǒu is not shown.
    expect(chars.map((c) => [c.char, c.tone, c.polyphone])).toEqual([
      ['仙', '平', false],
      ['看', '仄', true],
      ['不', '仄', true],
      ['们', '平', false],
    ]);
    expect(chars[2]!.pinyin).not.toContain('fǒu');
    expect((await native.readings('')).chars).toEqual([]);
    expect((await rejection(native.readings('春'.repeat(100_001)))).code).toBe('TOO_LONG');
    const bad = await rejection(native.readings(42 as unknown as string));
    expect(bad.code).toBe((await rejection(native.fill(42 as unknown as string))).code);
  });

  test('constraints that cannot be met are clear errors naming the blank', async () => {
    const cases: [string, object, string, RegExp][] = [
      ['疑是地[MASK:shangg]霜', {}, 'BAD_INPUT', /blank 1 \(\[MASK:shangg\]\): "shangg" is not a pinyin syllable/],
      ['[MASK]是地[MASK:shang6]霜', {}, 'BAD_INPUT', /blank 2 \(\[MASK:shang6\]\): "shang6" has tone 6/],
      ['疑是地[MASK:]霜', {}, 'BAD_INPUT', /blank 1 \(\[MASK:\]\): the constraint is empty/],
      [
        '疑是地[MASK:fo3]霜',
        {},
        'BAD_INPUT',
        /blank 1 \(\[MASK:fo3\]\): no character of this model's vocabulary reads fǒ/,
      ],
      ['疑是地[MASK]霜', { constraints: ['xx'] }, 'BAD_OPTION', /constraints\[0\] \(blank 1\): "xx" is not a pinyin/],
      [
        '疑是地[MASK]霜',
        { constraints: [null, 'shang'] },
        'BAD_OPTION',
        /constraints has 2 entries but the text has 1/,
      ],
      ['疑是地[MASK:shang]霜', { constraints: ['xia'] }, 'BAD_OPTION', /already has a constraint in the text/],
      ['疑是地[MASK]霜', { constraints: 'shang' }, 'BAD_OPTION', /constraints must be an array/],
      ['疑是地[MASK]霜', { constraints: [4] }, 'BAD_OPTION', /constraints\[0\] must be a syllable/],
    ];
    for (const [text, options, code, message] of cases) {
      const error = await rejection(native.fill(text, options as never));
      expect(error.code, text).toBe(code);
      expect(error.message, text).toMatch(message);
    }
    // Nothing was corrupted: the same engine still fills.
    expect((await native.fill('疑是地[MASK:shang]霜', { memory: false })).masks[0]!.candidates.length).toBeGreaterThan(
      0,
    );
  });

  test('CLI: the constraint in the mask header, readings beside candidates, BAD_INPUT per line', async () => {
    const dir = setup.dir;
    const table = await cli(['fill', '-m', dir, '--no-memory', '-k', '2', '疑是地[MASK:shang4]霜']);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/\[MASK\] #1 at 3–16 sounding shàng\n {5}1 {2}\S shàng(\/\S+)*\t/);
    const json = await cli(
      ['fill', '-m', dir, '--no-memory', '--json'],
      '疑是地[MASK:shang]霜\n疑是地[MASK:shangg]霜\n',
    );
    expect(json.status).toBe(2);
    const [ok, bad] = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(ok.masks[0].constraint).toBe('shang');
    expect(ok.masks[0].candidates[0].pinyin.length).toBeGreaterThan(0);
    expect(bad.error.code).toBe('BAD_INPUT');
    expect(json.stderr).toMatch(/line 2: blank 1 \(\[MASK:shangg\]\): "shangg" is not a pinyin syllable/);
  });

  test('a bracketed word that is not a constraint is text, as before', async () => {
    const result = await native.fill('[MASK:a[MASK]', { memory: false });
    expect(result.masks).toHaveLength(1);
    expect(result.masks[0]!.constraint).toBeUndefined();
  });
});

describe.skipIf(missing !== null)('sound constraints with the default model', () => {
  test('the issue’s examples come out first', async () => {
    const { createFillMask } = await api();
    const tk = await createFillMask({ backend: 'auto', threads: 1 });
    try {
      const shang = await tk.fill('床前明月光，疑是地[MASK:shang]霜');
      expect(shang.masks[0]!.candidates[0]!.token).toBe('上');
      expect(shang.masks[0]!.candidates[0]!.pinyin[0]).toBe('shàng');
      const an = await tk.fill('春风又绿江南[MASK:an4]');
      expect(an.masks[0]!.candidates[0]!.token).toBe('岸');
      const ze = await tk.fill('白日依山[MASK:仄]', { topK: 10 });
      const readings = unihanReadings();
      for (const c of ze.masks[0]!.candidates)
        expect((readings.get(c.token) ?? []).some((r) => meets(r, '仄'))).toBe(true);
    } finally {
      await tk.dispose();
    }
  });
});
