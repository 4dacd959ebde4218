// The editor's mask highlighting must agree with the tokenizer: every spelling the C++
// tokenizer (dist/core, the reference here) turns into [MASK] is highlighted, nothing else.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import {
  applyRunsUpdate,
  cleanSuspicious,
  findMarks,
  findMasks,
  findSuspicious,
  type Run,
  runsOf,
  updateRuns,
} from '../../web/app/src/text-marks.js';
import { BERT_BASE_CHINESE, loadBuild, missingPrerequisite, vocabPath } from '../core/core-builds.js';

const SPELLINGS = [
  '[MASK]',
  '[mask]',
  '[Mask]',
  '［MASK］',
  '［ｍａｓｋ］',
  '[ＭＡＳＫ]',
  '［MASK]',
  '[MASK］',
  '[MASK',
  'MASK]',
  '[ MASK ]',
  '[MASKS]',
  '[MAS]',
  '【MASK】',
  '【mask]',
  '[ＭＡＳＫ】',
  '【MASK',
  '(MASK)',
  '[[MASK]]',
  '[MASK:shang4]',
  '【MASK：平】',
  '［mask：ｓｈàｎｇ］',
  '[MASK:]',
  '[MASK:a[MASK]',
  '[MASK:shang',
  '[MASK:abcdefghijklmnop]',
  '[MASK:abcdefghijklmnopq]',
  '[MASK:😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀]',
  '[MASK:shang\n4]',
];

describe('findMasks agrees with the C++ tokenizer', () => {
  test.skipIf(missingPrerequisite() !== null)('the same masks at the same offsets for every spelling', async () => {
    const core = await loadBuild('single');
    const tokenizer = new core.module.Tokenizer(new Uint8Array(readFileSync(vocabPath)), BERT_BASE_CHINESE);
    try {
      for (const spelling of SPELLINGS) {
        const text = `春眠不觉晓，处处闻啼${spelling}。`;
        const { maskPositions, offsets } = tokenizer.encode(text);
        const spans = Array.from(maskPositions, (p) => [offsets[2 * p], offsets[2 * p + 1]]);
        expect(
          findMasks(text).map((m) => [m.start, m.end]),
          spelling,
        ).toEqual(spans);
      }
    } finally {
      tokenizer.delete();
      core.dispose();
    }
  });

  test('offsets cover exactly the mask text', () => {
    const text = '一[MASK]二［ｍａｓｋ］三';
    expect(findMasks(text).map((m) => text.slice(m.start, m.end))).toEqual(['[MASK]', '［ｍａｓｋ］']);
  });

  test("【MASK】 (a Chinese keyboard's brackets) is a mask, in any mix with the other brackets", () => {
    const text = '一【MASK】二【mask]三[MASK】四';
    expect(findMasks(text).map((m) => text.slice(m.start, m.end))).toEqual(['【MASK】', '【mask]', '[MASK】']);
  });
});

describe('suspicious characters', () => {
  test('flags invisible and unusual characters with a name and code point, not ordinary whitespace', () => {
    const text = 'a b\tc\nd\u3000e\u200bf\u00a0g\u202eh\u0007i\ufeffj\ufffd';
    expect(findSuspicious(text).map((m) => [m.start, m.label, m.zeroWidth])).toEqual([
      [7, '全角空格 U+3000', false],
      [9, '零宽空格 U+200B', true],
      [11, '不换行空格 U+00A0', false],
      [13, '文字方向控制符 U+202E', true],
      [15, '控制字符 U+0007', true],
      [17, '零宽不换行空格（BOM） U+FEFF', true],
      [19, '替换字符（乱码） U+FFFD', false],
    ]);
  });

  test('emoji with variation selectors and CJK text are not flagged', () => {
    expect(findSuspicious('❤️ 春眠不觉晓，处处闻啼鸟。👍🏽')).toEqual([]);
  });

  test('cleaning removes invisible characters and normalises spaces', () => {
    expect(cleanSuspicious('春\u3000眠\u200b不\u2028觉\u00a0晓\ufeff')).toBe('春 眠不\n觉 晓');
  });

  test('marks come sorted and never overlap', () => {
    const marks = findMarks('\u200b[MASK]\u3000[mask]\u200d');
    expect(marks.map((m) => m.kind)).toEqual(['suspicious', 'mask', 'suspicious', 'mask', 'suspicious']);
    for (let i = 1; i < marks.length; i++) expect(marks[i]!.start).toBeGreaterThanOrEqual(marks[i - 1]!.end);
  });
});

describe('updateRuns (the editor re-renders only around an edit)', () => {
  const marksOf = (runs: Run[]) =>
    runs.filter((r) => r.mark).map((r) => [r.start, r.end, r.mark!.kind, r.mark!.start, r.mark!.end]);
  const apply = (previous: string, runs: Run[], next: string): Run[] =>
    applyRunsUpdate(runs, updateRuns(previous, runs, next));
  const tiles = (runs: Run[], length: number) =>
    runs.every((r, i) => r.start === (i === 0 ? 0 : runs[i - 1]!.end) && r.end > r.start) &&
    (runs.length === 0 ? length === 0 : runs.at(-1)!.end === length);

  test('random edits of a text full of masks and invisible characters: the same marks as a full scan', () => {
    const pieces = [
      '春',
      '眠',
      '[MASK]',
      '【mask】',
      '［ＭＡＳＫ］',
      '\u200b',
      '\u3000',
      '😀',
      'a',
      '[',
      ']',
      'MASK',
      '\u202e',
      ' ',
    ];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let text = Array.from({ length: 300 }, () => pieces[random(pieces.length)]).join('');
    let runs = runsOf(text);
    for (let step = 0; step < 400; step++) {
      const at = random(text.length + 1);
      const cut = random(4) === 0 ? random(12) : 0;
      const insert = Array.from({ length: random(3) }, () => pieces[random(pieces.length)]).join('');
      const next = text.slice(0, at) + insert + text.slice(Math.min(text.length, at + cut));
      runs = apply(text, runs, next);
      text = next;
      expect(marksOf(runs), `step ${step}`).toEqual(marksOf(runsOf(text)));
      expect(tiles(runs, text.length), `step ${step}`).toBe(true);
    }
  });

  test('typing one character into 200 000 characters with 10 000 marks re-scans a few runs only', () => {
    const text = '春眠不觉晓\u200b处处闻啼鸟\u3000'.repeat(200_000 / 12);
    const runs = runsOf(text);
    expect(runs.filter((r) => r.mark).length).toBeGreaterThan(10_000);
    const at = 100_000;
    const update = updateRuns(text, runs, `${text.slice(0, at)}字${text.slice(at)}`);
    expect(update.middle.length).toBeLessThan(8);
    expect(update.head + update.tail + update.middle.length).toBeGreaterThan(runs.length - 8);
  });
});
