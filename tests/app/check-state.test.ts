// The 纠错 mode's bookkeeping (web/app/src/check-state.ts): which flags survive an edit, how
// suggestions are applied, which flag the caret is on. Expected values are worked out by hand.
import { describe, expect, test } from 'vitest';
import { applyCorrections, carryOver, correctionAt, type ShownCorrection } from '../../web/app/src/check-state.js';

function flag(start: number, original: string, suggestion: string): ShownCorrection {
  return {
    start,
    end: start + original.length,
    original,
    suggestion,
    score: 0.9,
    kind: 'sound',
    candidates: [{ token: suggestion, score: 0.9, pinyin: [] }],
  };
}

const spans = (list: ShownCorrection[]) => list.map((c) => [c.start, c.end, c.original]);

describe('carryOver', () => {
  const before = '我门明天去，以经约好';
  const flags = [flag(1, '门', '们'), flag(6, '以', '已')];

  test('an edit between two flags keeps both, the later one moved by the change in length', () => {
    expect(spans(carryOver(before, '我门后天一起去，以经约好', flags))).toEqual([
      [1, 2, '门'],
      [8, 9, '以'],
    ]);
  });

  test('an edit at the start moves every flag; one at the end moves none', () => {
    expect(spans(carryOver(before, `好，${before}`, flags))).toEqual([
      [3, 4, '门'],
      [8, 9, '以'],
    ]);
    expect(spans(carryOver(before, `${before}了。`, flags))).toEqual(spans(flags));
  });

  test('a flag the edit touches is dropped: replaced or deleted', () => {
    expect(spans(carryOver(before, '我们明天去，以经约好', flags))).toEqual([[6, 7, '以']]);
    expect(spans(carryOver(before, '我明天去，以经约好', flags))).toEqual([[5, 6, '以']]);
  });

  test('typing right after a flag keeps it until the recheck (no flicker while typing)', () => {
    expect(spans(carryOver('我门', '我门们', [flag(1, '门', '们')]))).toEqual([[1, 2, '门']]);
  });

  test('repeated characters: the unchanged start and end never overlap', () => {
    // "门门" -> "门": the deleted one could be either; neither flag may survive on a wrong offset.
    const kept = carryOver('我门门', '我门', [flag(1, '门', '们'), flag(2, '门', '们')]);
    for (const c of kept) expect('我门'.slice(c.start, c.end)).toBe('门');
    expect(kept.length).toBe(1);
  });

  test('never splits a surrogate pair', () => {
    // 𠀀 (U+20000) is two UTF-16 units; an edit of its second unit's neighbour keeps offsets whole.
    const text = '𠀀门';
    const kept = carryOver(text, '𠀁门', [flag(2, '门', '们')]);
    expect(spans(kept)).toEqual([[2, 3, '门']]);
  });
});

describe('applyCorrections', () => {
  test('puts each chosen token in place, from the end, skipping flags whose character changed', () => {
    const text = '我门明天去，以经约好';
    expect(
      applyCorrections(text, [
        { ...flag(1, '门', '们'), chosen: '们' },
        { ...flag(6, '以', '已'), chosen: '已' },
      ]),
    ).toBe('我们明天去，已经约好');
    expect(applyCorrections(text, [{ ...flag(2, '门', '们'), chosen: '们' }])).toBe(text);
  });
});

describe('correctionAt', () => {
  const flags = [flag(1, '门', '们'), flag(2, '以', '已')];
  test('the flag after the caret, else the one before it', () => {
    expect(correctionAt(flags, 0)).toBe(-1);
    expect(correctionAt(flags, 1)).toBe(0);
    expect(correctionAt(flags, 2)).toBe(1); // between two flags: the one it stands before
    expect(correctionAt(flags, 3)).toBe(1);
    expect(correctionAt(flags, 4)).toBe(-1);
  });
});
