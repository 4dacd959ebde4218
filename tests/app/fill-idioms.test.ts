// The filled sentence (click-to-fill) and the idiom card's lookup.
import { describe, expect, test } from 'vitest';
import { fillChosen, fillSentence, initialChoice } from '../../web/app/src/fill-state.js';
import { findCompletedIdioms, type IdiomAsset } from '../../web/app/src/idiom-lookup.js';

const result = {
  text: '一[MASK]二鸟，[mask]全十美',
  masks: [
    { start: 1, end: 7, candidates: [{ token: '石' }, { token: '箭' }] },
    { start: 10, end: 16, candidates: [{ token: '十' }, { token: '万' }] },
  ],
};

describe('fillSentence', () => {
  test('best candidates by default, with the spans of the filled tokens', () => {
    const filled = fillSentence(result);
    expect(filled.text).toBe('一石二鸟，十全十美');
    expect(filled.spans).toEqual([
      { maskIndex: 0, start: 1, end: 2 },
      { maskIndex: 1, start: 5, end: 6 },
    ]);
    expect(filled.parts.map((p) => p.text).join('')).toBe(filled.text);
  });

  test('picked candidates replace their masks only', () => {
    expect(fillSentence(result, [1, 0]).text).toBe('一箭二鸟，十全十美');
    expect(fillSentence(result, [0, 1]).text).toBe('一石二鸟，万全十美');
  });

  test('multi-character tokens and masks without candidates', () => {
    const r = {
      text: '[MASK]和[MASK]',
      masks: [
        { start: 0, end: 6, candidates: [{ token: 'ab' }] },
        { start: 7, end: 13, candidates: [] },
      ],
    };
    const filled = fillSentence(r);
    expect(filled.text).toBe('ab和[MASK]');
    expect(filled.spans).toEqual([{ maskIndex: 0, start: 0, end: 2 }]);
  });
});

describe('whole words for adjacent masks', () => {
  // Per mask, 的 is best at both blanks; jointly, 公园 is the best word.
  const joint = {
    text: '我们明天去[MASK][MASK]玩',
    masks: [
      { start: 5, end: 11, candidates: [{ token: '的' }, { token: '公' }] },
      { start: 11, end: 17, candidates: [{ token: '的' }, { token: '园' }] },
    ],
    words: [{ maskIndices: [0, 1], candidates: [{ tokens: ['公', '园'] }, { tokens: ['游', '乐'] }] }],
  };

  test('the first fill takes the best whole word, not the per-mask picks (我们明天去的的玩)', () => {
    const state = initialChoice(joint);
    expect(state).toEqual({ choice: [-1, -1], wordPicks: [0] });
    expect(fillChosen(joint, state).text).toBe('我们明天去公园玩');
    expect(fillChosen(joint, state).spans).toEqual([
      { maskIndex: 0, start: 5, end: 6 },
      { maskIndex: 1, start: 6, end: 7 },
    ]);
  });

  test('another word, then a per-mask pick inside it', () => {
    expect(fillChosen(joint, { choice: [-1, -1], wordPicks: [1] }).text).toBe('我们明天去游乐玩');
    expect(fillChosen(joint, { choice: [0, -1], wordPicks: [1] }).text).toBe('我们明天去的乐玩');
  });

  test('without words (or with an empty word list) every mask takes its best candidate', () => {
    expect(fillChosen({ ...joint, words: [] }, initialChoice({ ...joint, words: [] })).text).toBe('我们明天去的的玩');
    const empty = { ...joint, words: [{ maskIndices: [0, 1], candidates: [] }] };
    expect(initialChoice(empty)).toEqual({ choice: [0, 0], wordPicks: [-1] });
  });
});

describe('findCompletedIdioms', () => {
  const asset: IdiomAsset = {
    format: 'tiankong-idioms/1',
    count: 3,
    idioms: {
      一石二鸟: ['yī shí èr niǎo', '比喻做一件事得到两种好处。'],
      十全十美: ['shí quán shí měi', '十分完美，毫无欠缺。'],
      掩耳盗铃: ['yǎn ěr dào líng', '比喻自己欺骗自己。'],
    },
  };

  test('finds each idiom a filled token is part of', () => {
    const filled = fillSentence(result);
    expect(findCompletedIdioms(filled.text, filled.spans, asset).map((m) => [m.idiom, m.start, m.pinyin])).toEqual([
      ['一石二鸟', 0, 'yī shí èr niǎo'],
      ['十全十美', 5, 'shí quán shí měi'],
    ]);
  });

  test('an idiom the filled token is not part of does not count', () => {
    expect(findCompletedIdioms('掩耳盗铃啊', [{ maskIndex: 0, start: 4, end: 5 }], asset)).toEqual([]);
    expect(findCompletedIdioms('掩耳盗铃', [{ maskIndex: 0, start: 3, end: 4 }], asset).map((m) => m.idiom)).toEqual([
      '掩耳盗铃',
    ]);
  });

  test('wrong candidates and inherited object keys find nothing', () => {
    expect(findCompletedIdioms('掩耳盗钟', [{ maskIndex: 0, start: 3, end: 4 }], asset)).toEqual([]);
    expect(findCompletedIdioms('constructor', [{ maskIndex: 0, start: 0, end: 11 }], asset)).toEqual([]);
  });
});
