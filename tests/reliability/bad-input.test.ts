// Bad input through the built package (real wasm core + onnxruntime-web with the tiny model):
// every case ends in a clear result or a clear TiankongError, never loses a [MASK] silently,
// agrees with the independent reference (HF tokenizer ids → onnxruntime-web → JS softmax), and
// leaves the engine working: after each case a control text still gives the answer a pristine
// engine gives, and the cache counters add up.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillMaskModel, FillResult, TiankongErrorCode } from '../../web/src/index.js';
import { Reference, api, missingPrerequisite, testModelDir } from '../runtime/fixtures.js';
import { INVISIBLE_CHARS, canonicalMasks, expectWellFormedResult, wellFormed } from './helpers.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const MAX_CONTENT_TOKENS = 126; // the tiny model: max_length 128 minus [CLS] and [SEP]

interface Case {
  name: string;
  text: unknown;
  /** Number of masks the result must have, or the error code. */
  expected: number | TiankongErrorCode;
  message?: RegExp;
}

const CASES: Case[] = [
  { name: 'empty', text: '', expected: 'EMPTY_INPUT', message: /empty/ },
  { name: 'whitespace only (ASCII, NBSP, ideographic space)', text: ' \t\n\r\u00a0\u3000 ', expected: 'EMPTY_INPUT' },
  { name: 'no mask', text: '春眠不觉晓', expected: 'NO_MASK', message: /no \[MASK\]/ },
  {
    name: 'only invisible characters',
    text: '\u200b\u200d\ufeff\u202e',
    expected: 'EMPTY_INPUT',
    message: /only invisible characters/,
  },
  { name: 'only NUL', text: '\u0000\u0000', expected: 'EMPTY_INPUT', message: /only invisible characters/ },
  { name: 'a mask broken by a ZWSP is not a mask', text: '春[MA\u200bSK]', expected: 'NO_MASK' },
  { name: '1 mask', text: '春眠不觉晓，处处闻啼[MASK]。', expected: 1 },
  { name: '10 masks', text: '春[MASK]'.repeat(10), expected: 10 },
  { name: '100 masks', text: '[MASK]，'.repeat(10) + '[MASK]'.repeat(90), expected: 100 },
  { name: 'only masks, exactly the limit', text: '[MASK]'.repeat(MAX_CONTENT_TOKENS), expected: MAX_CONTENT_TOKENS },
  {
    name: 'only masks, one over the limit',
    text: '[MASK]'.repeat(MAX_CONTENT_TOKENS + 1),
    expected: 'TOO_LONG',
    message: new RegExp(`${MAX_CONTENT_TOKENS + 1} tokens long.*at most ${MAX_CONTENT_TOKENS}`),
  },
  {
    name: '10 000 characters, mask at the end',
    text: '春'.repeat(9994) + '[MASK]',
    expected: 'TOO_LONG',
    message: /9995 tokens long.*at most 126.*shorten/,
  },
  {
    name: '10 000 characters, mask at the start (not truncated away)',
    text: '[MASK]' + '春'.repeat(9994),
    expected: 'TOO_LONG',
    message: /9995 tokens long/,
  },
  { name: 'a 10 000-letter word is one [UNK]', text: 'a'.repeat(10000) + '[MASK]', expected: 1 },
  { name: 'lone surrogates around the mask', text: '\ud800春[MASK]\udc00', expected: 1 },
  { name: 'a truncated surrogate pair at the end', text: '[MASK]天\ud83d', expected: 1 },
  { name: 'NUL and other C0 controls', text: '春\u0000[MASK]\u0001\u001f\u007f天', expected: 1 },
  ...INVISIBLE_CHARS.map(([name, char]) => ({
    name: `${name} around the mask`,
    text: `${char}春${char}[MASK]${char}天${char}`,
    expected: 1,
  })),
  { name: 'emoji and ZWJ sequences', text: '👨‍👩‍👧[MASK]🏳️‍🌈👍🏽', expected: 1 },
  { name: 'CJK extension B/C/D/E characters', text: '𠀀𪚥[MASK]𫠝𬺰', expected: 1 },
  { name: 'mixed scripts', text: 'Hello世界Привет مرحبا שלום [MASK] नमस्ते ไทย 한국어', expected: 1 },
  { name: 'full-width mask', text: '春［MASK］', expected: 1 },
  { name: 'lower-case and full-width-letter masks', text: '春[mask]天［ＭａＳｋ］', expected: 2 },
  { name: 'special tokens typed in the text', text: '[CLS]春[SEP][PAD][UNK][MASK][SEP]', expected: 1 },
  { name: 'nested brackets', text: '[[MASK]][MASK[MASK]]', expected: 2 },
  {
    name: 'HTML and script text',
    text: '<script>alert(1)</script><img src=x onerror="alert(2)">[MASK]&lt;b&gt;',
    expected: 1,
  },
  { name: 'null', text: null, expected: 'BAD_OPTION', message: /must be a string, got null/ },
  { name: 'undefined', text: undefined, expected: 'BAD_OPTION', message: /must be a string, got undefined/ },
  { name: 'a String object', text: new String('[MASK]'), expected: 'BAD_OPTION', message: /must be a string/ },
  { name: 'an array', text: ['[MASK]'], expected: 'BAD_OPTION', message: /must be a string/ },
];

describe.skipIf(missing !== null)(
  'bad input: every case gives a clear result or error and the engine keeps working',
  () => {
    let tk: FillMaskModel;
    let pristine: FillMaskModel;
    let reference: Reference;
    let TiankongError: Awaited<ReturnType<typeof api>>['TiankongError'];
    let controls = 0;
    let controlChars: string[] = [];
    const CACHE = { maxEntries: 8, maxBytes: 64 << 10 }; // small, so the matrix also evicts

    beforeAll(async () => {
      const modelDir = testModelDir();
      const { createFillMask } = await api();
      ({ TiankongError } = await api());
      tk = await createFillMask({ model: modelDir, backend: 'wasm', cache: CACHE });
      pristine = await createFillMask({ model: modelDir, backend: 'wasm', cache: { maxEntries: 0 } });
      reference = await Reference.create(modelDir, 'web');
      // Single CJK characters of the vocabulary: each control text differs in its token ids.
      controlChars = Array.from({ length: 1600 }, (_, id) => reference.token(id)).filter((t) =>
        /^\p{Script=Han}$/u.test(t ?? ''),
      );
    });
    afterAll(async () => {
      await tk?.dispose();
      await pristine?.dispose();
    });

    /** Our candidates have the reference's probabilities, and the best eligible token is our first. */
    async function expectMatchesReference(result: FillResult) {
      const rows = await reference.probabilities(canonicalMasks(result.text));
      expect(rows.length, 'the reference finds the same number of masks').toBe(result.masks.length);
      result.masks.forEach((mask, m) => {
        const best = reference.topK(rows[m]!, 1)[0]!;
        expect(mask.candidates[0]!.score).toBeCloseTo(best.p, 5);
        for (const c of mask.candidates) {
          const id = reference.topK(rows[m]!, 1, (i) => reference.token(i) === c.token)[0]!;
          expect(c.score).toBeCloseTo(id.p, 5);
        }
      });
    }

    /** A fresh control text (a cache miss) gives exactly what an engine that never saw bad input gives. */
    async function expectStillWorks() {
      const text = `${controlChars[controls++ % controlChars.length]}，春眠不觉[MASK]。`;
      const [ours, clean] = await Promise.all([tk.fill(text, { topK: 3 }), pristine.fill(text, { topK: 3 })]);
      expect(ours.cached).toBe(false);
      expect(ours.masks).toEqual(clean.masks);
    }

    test.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, { text, expected, message }) => {
      const before = tk.stats();
      const outcome = await tk.fill(text as string).then(
        (r) => r,
        (e: unknown) => e,
      );
      const after = tk.stats();
      const lookups = (s: typeof before) => s.cache.hits + s.cache.misses;
      if (typeof expected === 'number') {
        expect(outcome, String(outcome)).not.toBeInstanceOf(Error);
        const result = outcome as FillResult;
        expectWellFormedResult(text as string, result);
        expect(result.masks).toHaveLength(expected);
        await expectMatchesReference(result);
        expect(lookups(after)).toBe(lookups(before) + 1);
        expect(after.runs).toBe(before.runs + (result.cached ? 0 : 1));
        // Asked again: the same answer, from the cache (the entry may be evicted only by a later put).
        const again = await tk.fill(text as string);
        expect(again.cached).toBe(true);
        expect(again.masks).toEqual(result.masks);
      } else {
        expect(outcome, 'a TiankongError').toBeInstanceOf(TiankongError);
        const error = outcome as InstanceType<typeof TiankongError>;
        expect(error.code, error.message).toBe(expected);
        expect(error.message).toMatch(/^tiankong: /);
        if (message) expect(error.message).toMatch(message);
        expect(lookups(after), 'a rejected text never reaches the cache').toBe(lookups(before));
        expect(after.runs).toBe(before.runs);
      }
      const { cache } = tk.stats();
      expect(cache.entries).toBeLessThanOrEqual(CACHE.maxEntries);
      expect(cache.bytes).toBeLessThanOrEqual(CACHE.maxBytes);
      await expectStillWorks();
    });

    test('fillBatch of every good case equals the single fills; a bad text anywhere runs nothing', async () => {
      const good = CASES.filter((c) => typeof c.expected === 'number').map((c) => c.text as string);
      const batch = await tk.fillBatch(good);
      const singles = await Promise.all(good.map((t) => pristine.fill(t)));
      expect(batch.map((r) => r.masks)).toEqual(singles.map((r) => r.masks));
      const runs = tk.stats().runs;
      const error = await tk.fillBatch([...good, '春'.repeat(300) + '[MASK]']).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TiankongError);
      expect((error as InstanceType<typeof TiankongError>).index).toBe(good.length);
      expect(tk.stats().runs).toBe(runs);
      await expectStillWorks();
    });

    test('lone surrogates become U+FFFD in the returned text, offsets still index the input', async () => {
      const input = '\udc00[MASK]\ud800';
      const result = await tk.fill(input);
      expect(result.text).toBe('\ufffd[MASK]\ufffd');
      expect(result.text).toBe(wellFormed(input));
      expect(input.slice(result.masks[0]!.start, result.masks[0]!.end)).toBe('[MASK]');
    });
  },
);
