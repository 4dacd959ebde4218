// The spelling check's evaluation: the metrics of model/tooling/check-metrics.mjs on hand-made
// cases (no data needed), and the sets of model/tooling/check-set.mjs built from the corpus
// splits (skipped without .cache/corpus, which scripts/build-corpus makes from the raw data).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { formatCheckReport, scoreCheck } from '../../model/tooling/check-metrics.mjs';
import {
  CHECK_SOURCES,
  KINDS,
  KIND_WEIGHTS,
  applyErrors,
  buildCheckSet,
  checkResources,
  checkSentences,
  fuzzyVariants,
  kindDeck,
  parseShapeTable,
  soundsOf,
  usableCheckSentence,
} from '../../model/tooling/check-set.mjs';
import { mulberry32 } from '../../model/tooling/prng.mjs';
import { UNIHAN, unihanDump } from '../harness/unihan-reference.mjs';

const REPO = join(import.meta.dirname, '../..');
const CORPUS = join(REPO, '.cache/corpus');
const HAN = /^\p{Script=Han}$/u;

type Kind = 'sound' | 'near-sound' | 'shape' | 'random';
type Err = { start: number; end: number; wrong: string; right: string; kind: Kind };
type Case = { source: string; text: string; correct: string; errors: Err[] };
type Fix = { start: number; end: number; original: string; suggestion: string };

/** A case from its correct text and [index, wrong, kind] substitutions (BMP characters). */
function makeCase(correct: string, subs: [number, string, Kind][] = []): Case {
  const errors = subs.map(([i, wrong, kind]) => ({ start: i, end: i + 1, wrong, right: correct[i], kind }));
  return { source: 'written', text: applyErrors(correct, errors), correct, errors };
}
const fix = (c: Case, i: number, suggestion: string): Fix => ({
  start: i,
  end: i + 1,
  original: c.text[i],
  suggestion,
});

describe('check metrics (hand-made cases)', () => {
  // A: correct, nothing flagged.  B: correct, flagged (a false alarm).
  // C: one error, flagged and corrected.  D: one error, right position, wrong suggestion.
  // E: two errors, one flagged (partial detection).  F: one error, nothing flagged.
  // G: one error flagged and corrected, plus a correct character flagged.
  const A = makeCase('今天天气很好。');
  const B = makeCase('我们明天去公园。');
  const C = makeCase('我在学校门口等你。', [[1, '再', 'sound']]);
  const D = makeCase('他的作业写完了。', [[3, '叶', 'sound']]);
  const E = makeCase('这个问题已经解决了。', [
    [2, '闻', 'sound'],
    [4, '己', 'shape'],
  ]);
  const F = makeCase('请把窗户关上。', [[5, '桑', 'near-sound']]);
  const G = makeCase('周末我们一起去爬山。', [[7, '她', 'random']]);
  const cases = [A, B, C, D, E, F, G];
  const results = [
    { corrections: [] },
    { corrections: [fix(B, 4, '工')] },
    { corrections: [fix(C, 1, '在')] },
    { corrections: [fix(D, 3, '夜')] },
    { corrections: [fix(E, 4, '已')] },
    { corrections: [] },
    { corrections: [fix(G, 7, '爬'), fix(G, 2, '门')] },
  ];

  test('the cases are what they say', () => {
    expect(E.text).toBe('这个闻题己经解决了。');
    expect(F.text).toBe('请把窗户关桑。');
    expect(G.text).toBe('周末我们一起去她山。');
    for (const c of cases) for (const e of c.errors) expect(c.text.slice(e.start, e.end)).toBe(e.wrong);
  });

  test('sentence-level detection and correction, false alarms, accuracy', () => {
    const m = scoreCheck(cases, results);
    expect(m.counts).toEqual({ sentences: 7, withErrors: 5, correct: 2, flagged: 5, falseAlarms: 1 });
    // Detected exactly: C and D (E partial, G has an extra position, F nothing).
    expect(m.detection.precision).toBeCloseTo(2 / 5);
    expect(m.detection.recall).toBeCloseTo(2 / 5);
    expect(m.detection.f1).toBeCloseTo(2 / 5);
    // Corrected: C only (D's suggestion is wrong).
    expect(m.correction.precision).toBeCloseTo(1 / 5);
    expect(m.correction.recall).toBeCloseTo(1 / 5);
    expect(m.correction.f1).toBeCloseTo(1 / 5);
    expect(m.falseAlarmRate).toBeCloseTo(1 / 2);
    expect(m.accuracy.detection).toBeCloseTo(3 / 7); // A, C, D
    expect(m.accuracy.correction).toBeCloseTo(2 / 7); // A, C
  });

  test('character-level scores and recall per kind and source', () => {
    const m = scoreCheck(cases, results);
    // 6 wrong characters; 6 flagged (B 1, C 1, D 1, E 1, G 2); 4 of them wrong ones; 3 corrected (C, E's 己, G's 她).
    expect(m.characters).toMatchObject({ errors: 6, flagged: 6, detected: 4, corrected: 3 });
    expect(m.characters.detection.precision).toBeCloseTo(4 / 6);
    expect(m.characters.detection.recall).toBeCloseTo(4 / 6);
    expect(m.characters.correction.precision).toBeCloseTo(3 / 6);
    expect(m.characters.correction.recall).toBeCloseTo(3 / 6);
    expect(m.byKind.sound).toMatchObject({ errors: 3, detected: 2, corrected: 1 });
    expect(m.byKind.shape).toMatchObject({ errors: 1, detected: 1, corrected: 1, correctionRecall: 1 });
    expect(m.byKind['near-sound']).toMatchObject({ errors: 1, detected: 0, corrected: 0, detectionRecall: 0 });
    expect(m.byKind.random).toMatchObject({ errors: 1, detected: 1, corrected: 1 });
    expect(m.bySource.written).toMatchObject({ sentences: 7, correct: 2, falseAlarms: 1, falseAlarmRate: 0.5 });
  });

  test('a checker that flags nothing: no precision, no recall, no false alarm', () => {
    const m = scoreCheck(
      cases,
      cases.map(() => ({ corrections: [] })),
    );
    expect(m.detection).toEqual({ precision: 0, recall: 0, f1: 0 });
    expect(m.correction).toEqual({ precision: 0, recall: 0, f1: 0 });
    expect(m.falseAlarmRate).toBe(0);
    expect(m.accuracy.detection).toBeCloseTo(2 / 7);
  });

  test('a perfect checker scores 1 everywhere; flagging only correct sentences scores 0 and all false alarms', () => {
    const perfect = cases.map((c) => ({
      corrections: c.errors.map((e) => ({ start: e.start, end: e.end, original: e.wrong, suggestion: e.right })),
    }));
    const m = scoreCheck(cases, perfect);
    expect(m.detection).toEqual({ precision: 1, recall: 1, f1: 1 });
    expect(m.correction).toEqual({ precision: 1, recall: 1, f1: 1 });
    expect(m.falseAlarmRate).toBe(0);
    const alarms = scoreCheck([A, B], [{ corrections: [fix(A, 0, '明')] }, { corrections: [fix(B, 0, '你')] }]);
    expect(alarms.falseAlarmRate).toBe(1);
    expect(alarms.detection).toEqual({ precision: 0, recall: 0, f1: 0 });
  });

  test('offsets are UTF-16: a character outside the BMP before the error', () => {
    const correct = '𠀀我在家里。';
    const c: Case = {
      source: 'wiki',
      text: '𠀀我再家里。',
      correct,
      errors: [{ start: 3, end: 4, wrong: '再', right: '在', kind: 'sound' }],
    };
    const m = scoreCheck([c], [{ corrections: [{ start: 3, end: 4, original: '再', suggestion: '在' }] }]);
    expect(m.correction.f1).toBe(1);
  });

  test('disagreeing offsets and result counts are errors', () => {
    expect(() => scoreCheck([C], [{ corrections: [{ start: 0, end: 1, original: '再', suggestion: '在' }] }])).toThrow(
      /text there/,
    );
    expect(() => scoreCheck([C], [])).toThrow(/results/);
  });

  test('the report is a markdown table', () => {
    const report = formatCheckReport(scoreCheck(cases, results));
    expect(report).toContain('| detection (sentence) | 40.0 | 40.0 | 40.0 |');
    expect(report).toContain('| correction (sentence) | 20.0 | 20.0 | 20.0 |');
    expect(report).toContain('False alarm rate: 50.0 %');
    expect(report).toContain('| near-sound | 1 | 0.0 | 0.0 |');
  });
});

describe('check set helpers', () => {
  test('fuzzy syllables: one of z/zh c/ch s/sh n/l, an/ang en/eng in/ing at a time', () => {
    expect(fuzzyVariants('zhang').sort()).toEqual(['zang', 'zhan']);
    expect(fuzzyVariants('lin').sort()).toEqual(['ling', 'nin']);
    expect(fuzzyVariants('cen').sort()).toEqual(['ceng', 'chen']);
    expect(fuzzyVariants('shi')).toEqual(['si']);
    expect(fuzzyVariants('ma')).toEqual([]);
  });

  test('a character is taken with its one or two likeliest readings', () => {
    // Counts win: 的 is "de" (the dì and dí of 目的 and 的确 are under 5 %).
    expect(
      soundsOf(['de5', 'di4', 'di2'], {
        pinlu: [
          ['de', 75596],
          ['di', 157],
          ['di', 84],
        ],
        tghz: [],
      }),
    ).toEqual([{ syllable: 'de', share: 1 }]);
    const chang = soundsOf(['zhang3', 'chang2'], {
      pinlu: [
        ['zhang', 1879],
        ['chang', 1179],
      ],
      tghz: [],
    });
    expect(chang.map((s) => s.syllable)).toEqual(['zhang', 'chang']);
    expect(chang[0].share).toBeCloseTo(1879 / 3058);
    // No counts: the first two of the standard's readings, in Unihan's order; else the first.
    expect(soundsOf(['mou2', 'jian4'], { pinlu: [], tghz: ['jian'] })).toEqual([{ syllable: 'jian', share: 1 }]);
    expect(soundsOf(['xing2', 'hang2', 'heng2'], { pinlu: [], tghz: ['hang', 'heng', 'xing'] })).toEqual([
      { syllable: 'xing', share: 0.8 },
      { syllable: 'hang', share: 0.2 },
    ]);
    expect(soundsOf(['ta1', 'tuo2'], undefined)).toEqual([{ syllable: 'ta', share: 1 }]);
  });

  test('kinds come in 55/15/20/10 proportions, a deck of 20 at a time', () => {
    const draw = kindDeck(mulberry32(5));
    const counts: Record<string, number> = {};
    for (let i = 0; i < 40; i++) {
      const k = draw();
      counts[k] = (counts[k] ?? 0) + 1;
    }
    expect(counts).toEqual(Object.fromEntries(KINDS.map((k) => [k, 40 * KIND_WEIGHTS[k]])));
  });

  test('sentences: 8-60 characters, mostly Chinese, whole; hard-wrapped novel lines lose their ends', () => {
    expect(usableCheckSentence('我们明天去公园。')).toBe(true);
    expect(usableCheckSentence('你好。')).toBe(false);
    expect(usableCheckSentence('使用 bzip2 --decompress file.bz2 解压')).toBe(false);
    expect(usableCheckSentence('他说：“明天见，我们在车站')).toBe(false);
    const dir = mkdtempSync(join(tmpdir(), 'tiankong-check-'));
    try {
      const path = join(dir, 'novels.txt');
      writeFileSync(path, '回营中。玄德闻言大喜，便请入城相见。二人饮酒至夜，方才散去。次日又\n');
      expect(checkSentences(path, 'novels')).toEqual(['玄德闻言大喜，便请入城相见。', '二人饮酒至夜，方才散去。']);
      writeFileSync(path, '我们明天去公园，你来吗\n');
      expect(checkSentences(path, 'written')).toEqual(['我们明天去公园，你来吗']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const missing =
  !existsSync(join(CORPUS, 'dev')) || !existsSync(join(CORPUS, 'val'))
    ? `${CORPUS}/dev, val missing (scripts/build-corpus makes them from the raw data): check-set tests skipped`
    : !existsSync(join(CORPUS, 'train.txt'))
      ? `${CORPUS}/train.txt missing (scripts/build-corpus): check-set tests skipped`
      : !existsSync(UNIHAN)
        ? `${UNIHAN} missing (Debian unicode-data; scripts/setup): check-set tests skipped`
        : null;
if (missing) console.warn(missing);

describe.skipIf(missing !== null)('check sets built from the corpus splits', () => {
  // Built once the suite runs (not when it is collected: without the corpus it is skipped).
  const built: Record<string, Case[]> = {};
  beforeAll(() => {
    built.dev = buildCheckSet('dev') as Case[];
    built.val = buildCheckSet('val') as Case[];
  });
  const splits = ['dev', 'val'];

  test('deterministic: the same seed gives the same cases, another seed others', () => {
    expect(buildCheckSet('dev')).toEqual(built.dev);
    expect(buildCheckSet('dev', { seed: 28 })).not.toEqual(built.dev);
  });

  test.each(splits)('%s: ~600 sentences of the modern sources, none shared with the other split', (split) => {
    const cases = built[split];
    expect(cases.length).toBeGreaterThanOrEqual(550);
    expect(cases.length).toBeLessThanOrEqual(600);
    for (const c of cases) {
      expect(CHECK_SOURCES).toContain(c.source);
      expect(usableCheckSentence(c.correct), c.correct).toBe(true);
    }
    expect(new Set(cases.map((c) => c.correct)).size).toBe(cases.length);
    const other = new Set(built[split === 'dev' ? 'val' : 'dev'].map((c) => c.correct));
    expect(cases.filter((c) => other.has(c.correct))).toEqual([]);
  });

  test.each(splits)('%s: offsets, positions and counts of the errors', (split) => {
    const cases = built[split];
    const { commonSet } = checkResources();
    for (const c of cases) {
      expect(c.text.length).toBe(c.correct.length);
      if (!c.errors.length) {
        expect(c.text).toBe(c.correct);
        continue;
      }
      expect(c.errors.length).toBeLessThanOrEqual(2);
      expect(c.text).not.toBe(c.correct);
      let rebuilt = c.text;
      c.errors.forEach((e, i) => {
        expect(c.text.slice(e.start, e.end), c.text).toBe(e.wrong);
        expect(c.correct.slice(e.start, e.end), c.correct).toBe(e.right);
        expect(HAN.test(e.right) && HAN.test(e.wrong), `${e.right}->${e.wrong}`).toBe(true);
        expect(e.wrong).not.toBe(e.right);
        expect(commonSet.has(e.wrong), e.wrong).toBe(true);
        if (i > 0) expect(e.start).toBeGreaterThan(c.errors[i - 1].end); // ordered, never side by side
        rebuilt = rebuilt.slice(0, e.start) + e.right + rebuilt.slice(e.end);
      });
      expect(rebuilt).toBe(c.correct);
      // Outside the errors the texts agree.
      const spans = new Set(c.errors.map((e) => e.start));
      for (let i = 0; i < c.text.length; i++) if (!spans.has(i)) expect(c.text[i]).toBe(c.correct[i]);
    }
  });

  test.each(splits)('%s: half the sentences correct; kinds in about their shares', (split) => {
    const cases = built[split];
    const withErrors = cases.filter((c) => c.errors.length);
    expect(Math.abs(cases.length - 2 * withErrors.length)).toBeLessThanOrEqual(CHECK_SOURCES.length);
    const errors = withErrors.flatMap((c) => c.errors);
    const two = withErrors.filter((c) => c.errors.length === 2).length;
    expect(two / withErrors.length).toBeGreaterThan(0.05);
    expect(two / withErrors.length).toBeLessThan(0.3);
    for (const kind of KINDS) {
      const share = errors.filter((e) => e.kind === kind).length / errors.length;
      expect(Math.abs(share - KIND_WEIGHTS[kind]), kind).toBeLessThan(0.05);
    }
  });

  test.each(splits)('%s: each error is of the kind it says (readings per unihanDump)', (split) => {
    const cases = built[split];
    const readings = new Map<string, string[]>();
    for (const line of unihanDump().trimEnd().split('\n')) {
      const [cp, list] = line.split('\t');
      readings.set(
        String.fromCodePoint(parseInt(cp.slice(2), 16)),
        list.split(' ').map((r) => r.replace(/\d$/, '')),
      );
    }
    const shape = parseShapeTable();
    // Fuzzy sounds folded together: zh/ch/sh -> z/c/s, l -> n, ang/eng/ing -> an/en/in.
    const fold = (s: string) =>
      s
        .replace(/^([zcs])h/, '$1')
        .replace(/^l/, 'n')
        .replace(/([aei])ng$/, '$1n');
    for (const c of cases) {
      for (const e of c.errors) {
        const right = readings.get(e.right) ?? [];
        const wrong = readings.get(e.wrong) ?? [];
        const label = `${c.correct}: ${e.right}->${e.wrong} (${right} / ${wrong}) ${e.kind}`;
        const looksLike = (shape.get(e.right) ?? []).some((n: { char: string }) => n.char === e.wrong);
        if (e.kind === 'sound')
          expect(
            wrong.some((s) => right.includes(s)),
            label,
          ).toBe(true);
        if (e.kind === 'near-sound') {
          expect(
            wrong.some((w) => right.some((r) => r !== w && fold(r) === fold(w))),
            label,
          ).toBe(true);
          expect(wrong[0] === right[0], label).toBe(false);
        }
        if (e.kind === 'shape') {
          expect(looksLike, label).toBe(true);
          expect(wrong[0] === right[0], label).toBe(false);
        }
        if (e.kind === 'random') {
          expect(looksLike, label).toBe(false);
          expect(wrong[0] === right[0], label).toBe(false);
        }
      }
    }
  });
});
