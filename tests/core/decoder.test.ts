// The wasm top-k decoder (both builds) against a straightforward JS reference:
// float64 softmax over the whole row, eligibility from the vocab strings, full sort.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { DecodeOptions, WasmDecoder, WasmTokenizer } from '../../web/src/core/core-module.js';
import type { LoadedCore } from '../../web/src/core/load-core.js';
import { BERT_BASE_CHINESE, VARIANTS, loadBuild, missingPrerequisite, readVocab, rng } from './core-builds.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const DEFAULTS: DecodeOptions = {
  topK: 5,
  threshold: 0,
  excludeSpecial: true,
  excludeSubwords: true,
  allowIds: new Int32Array(0),
  denyIds: new Int32Array(0),
};

interface Row {
  ids: number[];
  probabilities: number[];
  other: number;
}

function referenceEligibility(tokenizer: WasmTokenizer, options: DecodeOptions): boolean[] {
  const n = tokenizer.vocabSize();
  const special = new Set(Object.values(tokenizer.specialIds()));
  const allow = new Set(options.allowIds);
  const deny = new Set(options.denyIds);
  return Array.from({ length: n }, (_, id) => {
    const token = tokenizer.idToToken(id);
    if (allow.size > 0 && !allow.has(id)) return false;
    if (deny.has(id)) return false;
    if (options.excludeSpecial && (special.has(id) || /^\[unused\d+\]$/.test(token))) return false;
    if (options.excludeSubwords && token.startsWith('##') && token.length > 2) return false;
    return true;
  });
}

function referenceDecode(row: Float32Array, eligible: boolean[], options: DecodeOptions): Row {
  let max = -Infinity;
  for (const v of row) max = Math.max(max, v);
  let sum = 0;
  for (const v of row) sum += Math.exp(v - max);
  const all: { id: number; p: number }[] = [];
  row.forEach((v, id) => {
    if (eligible[id] && v !== -Infinity) all.push({ id, p: Math.exp(v - max) / sum });
  });
  all.sort((a, b) => b.p - a.p || a.id - b.id);
  const kept = all.slice(0, options.topK).filter((c) => c.p >= options.threshold);
  return {
    ids: kept.map((c) => c.id),
    probabilities: kept.map((c) => c.p),
    other: 1 - kept.reduce((s, c) => s + c.p, 0),
  };
}

function normalRow(next: () => number, n: number, scale: number): Float32Array {
  const row = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const u = 1 - next();
    row[i] = scale * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  }
  return row;
}

describe.skipIf(missing !== null).each(VARIANTS)('decoder [%s build]', (variant) => {
  let core: LoadedCore;
  let tokenizer: WasmTokenizer;
  const decoders: WasmDecoder[] = [];
  const vocab = 21128;

  beforeAll(async () => {
    core = await loadBuild(variant);
    tokenizer = new core.module.Tokenizer(readVocab(), BERT_BASE_CHINESE);
  });
  afterAll(() => {
    decoders.forEach((d) => d.delete());
    tokenizer?.delete();
    core?.dispose();
  });

  function makeDecoder(overrides: Partial<DecodeOptions>): { decoder: WasmDecoder; options: DecodeOptions } {
    const options = { ...DEFAULTS, ...overrides };
    const decoder = new core.module.Decoder(tokenizer, options);
    decoders.push(decoder);
    return { decoder, options };
  }

  function expectMatchesReference(decoder: WasmDecoder, options: DecodeOptions, logits: Float32Array, nRows: number) {
    const eligible = referenceEligibility(tokenizer, options);
    const rows = decoder.decode(logits, nRows, vocab, undefined, undefined);
    expect(rows).toHaveLength(nRows);
    rows.forEach((row, r) => {
      const expected = referenceDecode(logits.subarray(r * vocab, (r + 1) * vocab), eligible, options);
      expect(Array.from(row.ids), `row ${r} ids`).toEqual(expected.ids);
      row.probabilities.forEach((p, i) => {
        expect(Math.abs(p - expected.probabilities[i]) / expected.probabilities[i], `row ${r} rank ${i}`).toBeLessThan(
          1e-6,
        );
      });
      expect(row.other).toBeCloseTo(expected.other, 6);
    });
  }

  test.each([
    { topK: 1, threshold: 0 },
    { topK: 5, threshold: 0 },
    { topK: 10, threshold: 0.02 },
    { topK: 50, threshold: 0 },
  ])('random logits match the reference (%o)', (overrides) => {
    const { decoder, options } = makeDecoder(overrides);
    const next = rng(overrides.topK * 1000 + overrides.threshold * 1e4);
    const nRows = 3;
    const logits = new Float32Array(nRows * vocab);
    for (let r = 0; r < nRows; r++) logits.set(normalRow(next, vocab, 2 + 3 * r), r * vocab);
    logits[vocab + 4000] = 30; // one confident row: the threshold cuts the rest
    expectMatchesReference(decoder, options, logits, nRows);
  });

  test('ties are ordered by id; -Infinity means probability 0 and is never proposed', () => {
    const { decoder, options } = makeDecoder({ topK: 20 });
    const next = rng(7);
    const logits = normalRow(next, 2 * vocab, 2).map((v) => Math.round(v)); // coarse: many exact ties
    for (let i = vocab; i < 2 * vocab; i++) if (next() < 0.999) logits[i] = -Infinity; // ~21 finite entries
    expectMatchesReference(decoder, options, logits, 2);
    const sparse = decoder.decode(logits.subarray(vocab), 1, vocab, undefined, undefined)[0];
    for (const id of sparse.ids) expect(logits[vocab + id]).not.toBe(-Infinity);
  });

  test('allow and deny lists, special tokens and ## pieces', () => {
    const special = tokenizer.specialIds();
    const logits = new Float32Array(vocab);
    const ids = [
      special.mask,
      special.unk,
      tokenizer.tokenToId('[unused5]'),
      tokenizer.tokenToId('##的'),
      tokenizer.tokenToId('的'),
      tokenizer.tokenToId('了'),
      tokenizer.tokenToId('是'),
    ];
    ids.forEach((id, rank) => (logits[id] = 20 - rank));
    expect(Array.from(makeDecoder({ topK: 2 }).decoder.decode(logits, 1, vocab, undefined, undefined)[0].ids)).toEqual(
      ids.slice(4, 6),
    );
    const flagsOff = makeDecoder({ topK: 4, excludeSpecial: false, excludeSubwords: false });
    expect(Array.from(flagsOff.decoder.decode(logits, 1, vocab, undefined, undefined)[0].ids)).toEqual(ids.slice(0, 4));
    const lists = makeDecoder({
      topK: 3,
      allowIds: new Int32Array([ids[5], ids[6], ids[0]]),
      denyIds: new Int32Array([ids[5]]),
    });
    expect(Array.from(lists.decoder.decode(logits, 1, vocab, undefined, undefined)[0].ids)).toEqual([ids[6]]);
    expectMatchesReference(lists.decoder, lists.options, logits, 1);
  });

  test('NaN, +Infinity, all -Infinity rows and bad shapes throw specific errors', () => {
    const { decoder } = makeDecoder({});
    const logits = new Float32Array(2 * vocab);
    logits[vocab + 17] = NaN;
    expect(() => decoder.decode(logits, 2, vocab, undefined, undefined)).toThrow(/logits\[row 1, column 17\] is NaN/);
    logits[vocab + 17] = Infinity;
    expect(() => decoder.decode(logits, 2, vocab, undefined, undefined)).toThrow(
      /logits\[row 1, column 17\] is \+Infinity/,
    );
    logits.fill(-Infinity, vocab);
    expect(() => decoder.decode(logits, 2, vocab, undefined, undefined)).toThrow(/row 1 is all -Infinity/);
    expect(() => decoder.decode(logits, 3, vocab, undefined, undefined)).toThrow(
      /logits has 42256 values, expected nRows x vocabSize = 3 x 21128/,
    );
    expect(() => decoder.decode(logits, 2, 100, undefined, undefined)).toThrow(
      /vocabSize is 100 but the tokenizer's vocabulary has 21128/,
    );
    expect(() => decoder.decode(Array.from(logits) as never, 2, vocab, undefined, undefined)).toThrow(
      /logits must be a Float32Array/,
    );
    expect(decoder.decode(new Float32Array(0), 0, vocab, undefined, undefined)).toEqual([]);
    // The decoder still works after errors.
    expect(decoder.decode(new Float32Array(vocab), 1, vocab, undefined, undefined)[0].ids).toHaveLength(5);
  });

  test('bad options throw specific errors', () => {
    const make = (o: object) => () => makeDecoder(o as Partial<DecodeOptions>);
    expect(make({ topK: 0 })).toThrow(/DecodeOptions.topK must be an integer in \[1, 21128\]/);
    expect(make({ topK: 2.5 })).toThrow(/topK/);
    expect(make({ threshold: 1.5 })).toThrow(/DecodeOptions.threshold must be a number in \[0, 1\]/);
    expect(make({ excludeSpecial: 'yes' })).toThrow(/DecodeOptions.excludeSpecial must be a boolean/);
    expect(make({ allowIds: [1, 2] })).toThrow(/DecodeOptions.allowIds must be an Int32Array/);
    expect(make({ denyIds: new Int32Array([5, 21128]) })).toThrow(
      /DecodeOptions.denyIds\[1\] = 21128 is not a token id/,
    );
  });
});
