// The editor's mask highlighting must agree with the tokenizer: every spelling the C++
// tokenizer (dist/core, the reference here) turns into [MASK] is highlighted, nothing else.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import {
  cleanSuspicious,
  findMarks,
  findMasks,
  findSuspicious,
  headOf,
  splitsPair,
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

describe('cuts never split a surrogate pair', () => {
  test('splitsPair: only between a high and a low surrogate', () => {
    const text = '床𠀀前'; // U+20000 is two units
    expect([0, 1, 2, 3, 4].map((cut) => splitsPair(text, cut))).toEqual([false, false, true, false, false]);
    expect(splitsPair('a\uD800b', 2)).toBe(false); // a lone high surrogate is not a pair
  });
  test("headOf keeps the limit's units, one fewer where the limit falls inside a pair", () => {
    expect(headOf('床𠀀前', 2)).toBe('床');
    expect(headOf('床𠀀前', 3)).toBe('床𠀀');
    expect(headOf('床前', 5)).toBe('床前');
  });
});
