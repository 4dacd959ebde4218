// @ts-check
/**
 * Inputs for the reliability harnesses (tests/reliability, scripts/soak, scripts/fuzz-fill):
 * a seeded generator of hostile fill() texts from a small grammar, and the invariants every
 * successful fill result must satisfy whatever its input. Plain ESM with JSDoc types, so the
 * scripts, the Vitest suites and pages in Chromium (soak.mjs imports it in the page, from
 * /tests/harness/fill-inputs.mjs) share one implementation.
 */

/** The seeded PRNG the harnesses draw inputs with (re-exported for pages that load only this module). */
export { mulberry32 } from '../../model/tooling/prng.mjs';

/**
 * Characters that render as nothing (or almost), each a classic source of tokenizer bugs.
 * @type {ReadonlyArray<readonly [name: string, chars: string]>}
 */
export const INVISIBLE_CHARS = [
  ['ZWSP U+200B', '\u200b'],
  ['ZWNJ U+200C', '\u200c'],
  ['ZWJ U+200D', '\u200d'],
  ['LRM U+200E', '\u200e'],
  ['RLM U+200F', '\u200f'],
  ['ALM U+061C', '\u061c'],
  ['LRE..RLO U+202A-202E', '\u202a\u202b\u202c\u202d\u202e'],
  ['LRI..PDI U+2066-2069', '\u2066\u2067\u2068\u2069'],
  ['word joiner U+2060', '\u2060'],
  ['invisible times U+2062', '\u2062'],
  ['BOM U+FEFF', '\ufeff'],
  ['soft hyphen U+00AD', '\u00ad'],
  ['NEL U+0085', '\u0085'],
  ['line separator U+2028', '\u2028'],
  ['paragraph separator U+2029', '\u2029'],
  ['Mongolian vowel separator U+180E', '\u180e'],
  ['combining grapheme joiner U+034F', '\u034f'],
  ['variation selector U+FE0F', '\ufe0f'],
  ['variation selector U+E0100', '\u{e0100}'],
  ['tag U+E0041', '\u{e0041}'],
  ['interlinear annotation U+FFF9-FFFB', '\ufff9\ufffa\ufffb'],
  ['object replacement U+FFFC', '\ufffc'],
  ['replacement U+FFFD', '\ufffd'],
  ['Hangul filler U+3164', '\u3164'],
  ['Braille blank U+2800', '\u2800'],
];

/**
 * Spellings of the mask the tokenizer accepts (wasm/include/tiankong/tiankong.h): ASCII or
 * full-width brackets around MASK in any case, ASCII or full-width letters. HF knows only "[MASK]".
 */
export const MASK_SPELLING = /[[［][mＭｍ][aＡａ][sＳｓ][kＫｋ][\]］]/gi;

/**
 * The part of a fill() result the invariants look at.
 * @typedef {object} CheckedResult
 * @property {string} text
 * @property {Array<{ index: number, start: number, end: number, other: number,
 *   candidates: Array<{ token: string, score: number, sequence: string }> }>} masks
 */

/**
 * The text as HF's tokenizer must see it to find the same masks.
 * @param {string} text
 * @returns {string}
 */
export function canonicalMasks(text) {
  return text.replace(MASK_SPELLING, '[MASK]');
}

/**
 * Lone surrogates → U+FFFD, as the runtime documents (same length, so offsets stay valid).
 * @param {string} text
 * @returns {string}
 */
export function wellFormed(text) {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/**
 * What every result must satisfy whatever the input; returns the violations (empty = fine):
 * the returned text is the input made well-formed; one mask result per mask spelling in it
 * (none lost), in order, each pointing at a mask spelling of the caller's own string;
 * candidates are ordinary vocabulary tokens (no [..] special/unused token, no ## piece), at most
 * topK, at least one unless a threshold may remove them all, with probabilities in
 * [threshold, 1] sorted descending; `other` is the rest of the mass; every `sequence` is the
 * text with that mask replaced.
 * @param {string} input
 * @param {CheckedResult} result
 * @param {{ topK?: number, threshold?: number }} [options]
 * @returns {string[]}
 */
export function resultViolations(input, result, options = {}) {
  const topK = options.topK ?? 5;
  const threshold = options.threshold ?? 0;
  /** @type {string[]} */
  const problems = [];
  const text = wellFormed(input);
  if (result.text !== text) problems.push('text is not the well-formed input');
  const spelled = text.match(MASK_SPELLING)?.length ?? 0;
  if (result.masks.length !== spelled)
    problems.push(`${result.masks.length} mask results for ${spelled} masks in the text`);
  let previousEnd = 0;
  result.masks.forEach((mask, index) => {
    const at = `masks[${index}]`;
    if (mask.index !== index) problems.push(`${at}.index is ${mask.index}`);
    if (mask.start < previousEnd || mask.end <= mask.start)
      problems.push(`${at} spans [${mask.start}, ${mask.end}) after ${previousEnd}`);
    previousEnd = mask.end;
    if (canonicalMasks(input.slice(mask.start, mask.end)) !== '[MASK]') {
      problems.push(`${at} points at ${JSON.stringify(input.slice(mask.start, mask.end))}, not a mask`);
    }
    if (mask.candidates.length > topK || (threshold === 0 && mask.candidates.length === 0)) {
      problems.push(`${at} has ${mask.candidates.length} candidates (topK ${topK}, threshold ${threshold})`);
    }
    let previous = Infinity;
    let sum = 0;
    for (const c of mask.candidates) {
      if (!(c.score > 0 && c.score >= threshold && c.score <= 1 && c.score <= previous))
        problems.push(`${at} score ${c.score} out of range or order`);
      previous = c.score;
      sum += c.score;
      if (/^\[[^\]]*\]$|^##./.test(c.token)) problems.push(`${at} proposes ${c.token}`);
      if (c.sequence !== text.slice(0, mask.start) + c.token + text.slice(mask.end))
        problems.push(`${at} sequence for ${c.token} is wrong`);
    }
    if (!(Math.abs(mask.other - (1 - sum)) < 1e-4)) problems.push(`${at}.other ${mask.other} is not 1 - ${sum}`);
  });
  return problems;
}

const HANZI =
  '春眠不觉晓处闻啼鸟夜来风雨声花落知多少白日依山尽黄河入海流欲穷千里目更上一层楼床前明月光疑是地霜举头望低思故乡天人大中国的了';
const MASKS = ['[MASK]', '[MASK]', '[MASK]', '［MASK］', '[mask]', '［ＭＡＳＫ］', ' [MASK] '];
const BROKEN_MASKS = [
  '[MASK',
  'MASK]',
  '[MAS]',
  '[ MASK]',
  '[MA\u200bSK]',
  '[[',
  ']]',
  '［',
  '[MASKK]',
  '[MASK\ud800]',
];
const SPECIAL_TOKENS = ['[CLS]', '[SEP]', '[PAD]', '[UNK]', '[unused1]', '##'];
const EMOJI = ['😀', '👨‍👩‍👧', '🏳️‍🌈', '👍🏽', '🇨🇳', '1️⃣', '🧑🏿‍🦰'];
const RARE = ['𠀀', '𪚥', '𫠝', '𬺰', '𰀀', '㐀', '〇', '豈', '⺀', '⿰'];
const SCRIPTS = ['Hello', 'Привет', 'مرحبا', 'שלום', 'नमस्ते', 'ไทย', '한국어', 'Ελληνικά', 'café', 'ｆｕｌｌ'];
const MARKUP = [
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '&lt;b&gt;',
  '"\'`',
  '${x}',
  '{{x}}',
  '\\u0000',
];
const PUNCTUATION = '，。！？、；：“”‘’（）《》…—·,.!?;:()-_/\\@#%^&*+=|~';
const WHITESPACE = [' ', '\t', '\n', '\r\n', '\u3000', '\u00a0', '\u2003'];

/**
 * Fragment generators of the grammar, each with a weight.
 * @type {Array<[weight: number, make: (random: Random) => string]>}
 */
const FRAGMENTS = [
  [30, (r) => pickChars(r, HANZI, 1 + int(r, 8))],
  [14, (r) => pick(r, MASKS)],
  [4, (r) => pick(r, BROKEN_MASKS)],
  [3, (r) => pick(r, SPECIAL_TOKENS)],
  [6, (r) => pickChars(r, PUNCTUATION, 1 + int(r, 3))],
  [5, (r) => pick(r, WHITESPACE)],
  [5, (r) => pick(r, INVISIBLE_CHARS)[1]],
  [3, (r) => String.fromCharCode(int(r, 32))], // C0 controls, NUL included
  [3, (r) => String.fromCharCode(0xd800 + int(r, 0x800))], // a lone surrogate
  [4, (r) => pick(r, EMOJI)],
  [3, (r) => pick(r, RARE)],
  [4, (r) => pick(r, SCRIPTS)],
  [2, (r) => pick(r, MARKUP)],
  [2, (r) => String.fromCodePoint(randomCodePoint(r))],
  [1, (r) => 'a'.repeat(50 + int(r, 300))], // one long word
  [1, (r) => pickChars(r, HANZI, 60 + int(r, 200))], // long text: often over the limit
];
const TOTAL_WEIGHT = FRAGMENTS.reduce((sum, [weight]) => sum + weight, 0);

/** @typedef {() => number} Random uniform numbers in [0, 1), e.g. mulberry32(seed) */

/** @param {Random} random @param {number} n */
function int(random, n) {
  return Math.floor(random() * n);
}
/** @template T @param {Random} random @param {ReadonlyArray<T>} list @returns {T} */
function pick(random, list) {
  return list[int(random, list.length)];
}
/** @param {Random} random @param {string} chars @param {number} count */
function pickChars(random, chars, count) {
  return Array.from({ length: count }, () => chars[int(random, chars.length)]).join('');
}
/** @param {Random} random */
function randomCodePoint(random) {
  for (;;) {
    const cp = int(random, 0x110000);
    if (cp < 0xd800 || cp > 0xdfff) return cp;
  }
}

/**
 * One hostile text: 0–40 fragments of the grammar (so empty, mask-less and over-long texts occur too).
 * @param {Random} random
 * @returns {string}
 */
export function randomText(random) {
  const count = random() < 0.03 ? 0 : 1 + int(random, 40);
  let text = '';
  for (let i = 0; i < count; i++) {
    let roll = random() * TOTAL_WEIGHT;
    const fragment = FRAGMENTS.find(([weight]) => (roll -= weight) < 0) ?? FRAGMENTS[0];
    text += fragment[1](random);
  }
  return text;
}

/**
 * One fill() call: a hostile text, mostly default options, sometimes valid non-default ones,
 * sometimes an invalid option or a non-string text (so BAD_OPTION is exercised too).
 * @param {Random} random
 * @returns {{ text: unknown, options: Record<string, unknown> }}
 */
export function randomFillCall(random) {
  const roll = random();
  if (roll < 0.02) return { text: pick(random, [null, undefined, 42, {}, ['[MASK]']]), options: {} };
  const text = randomText(random);
  if (roll < 0.75) return { text, options: {} };
  if (roll < 0.95) {
    return {
      text,
      options: {
        topK: 1 + int(random, 20),
        threshold: pick(random, [0, 0, 0.001, 0.5, 1]),
        ...(random() < 0.2 ? { filter: 'chinese' } : {}),
      },
    };
  }
  return {
    text,
    options: pick(random, [
      { topK: 0 },
      { topK: 1.5 },
      { threshold: -1 },
      { threshold: NaN },
      { filter: 'nope' },
      { filter: { allow: ['不在词表里的词'] } },
    ]),
  };
}

/**
 * A short readable form of an input for reports: JSON with escapes, long runs elided.
 * @param {unknown} text
 * @returns {string}
 */
export function describeInput(text) {
  if (typeof text !== 'string') return `(${text === null ? 'null' : typeof text}) ${String(text)}`;
  const json = JSON.stringify(text).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return json.length > 300 ? `${json.slice(0, 200)}…(${text.length} UTF-16 units)…${json.slice(-60)}` : json;
}

const SOAK_POOL_SIZE = 40;

/**
 * One call of a soak run's mix, from a seeded random: ~45% texts from a fixed pool of
 * SOAK_POOL_SIZE (cache hits once seen), ~40% fresh texts with 1–3 masks (cache misses), ~10%
 * rejected calls (empty, no mask, too long, bad option), ~5% hostile grammar texts. `kind` says
 * which, for the report.
 * @param {Random} random
 * @returns {{ kind: 'repeat' | 'fresh' | 'error' | 'hostile', text: string, options: Record<string, unknown> }}
 */
export function soakCall(random) {
  const roll = random();
  if (roll < 0.45) {
    const n = int(random, SOAK_POOL_SIZE);
    return {
      kind: 'repeat',
      text: `${HANZI[n % HANZI.length]}${HANZI[(n * 7) % HANZI.length]}[MASK]${HANZI[(n * 13) % HANZI.length]}。`,
      options: {},
    };
  }
  if (roll < 0.85) {
    let text = pickChars(random, HANZI, 3 + int(random, 40));
    for (let m = 1 + int(random, 3); m > 0; m--) {
      const at = int(random, text.length + 1);
      text = `${text.slice(0, at)}[MASK]${text.slice(at)}`;
    }
    return { kind: 'fresh', text, options: random() < 0.2 ? { topK: 3 } : {} };
  }
  if (roll < 0.95) {
    return pick(random, [
      { kind: 'error', text: '', options: {} },
      { kind: 'error', text: pickChars(random, HANZI, 10), options: {} },
      { kind: 'error', text: `${pickChars(random, HANZI, 200)}[MASK]`, options: {} },
      { kind: 'error', text: '春[MASK]', options: { topK: 0 } },
    ]);
  }
  return { kind: 'hostile', text: randomText(random), options: {} };
}
