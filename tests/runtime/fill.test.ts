// fill()/fillBatch() of the built package with real wasm (C++ core) and real ONNX Runtime
// (onnxruntime-web's wasm backend, and onnxruntime-node), checked against the reference
// pipeline in fixtures.ts (HF tokenizer → onnxruntime-node → JS softmax/top-k).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillMask, FillMaskModel } from '../../web/src/index.js';
import { Reference, missingPrerequisite, openTinyModel, type TinyModelSetup } from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const TEXTS = ['春眠不觉晓，处处闻[MASK]鸟。', '床前明月[MASK]', '[MASK]天', '不[MASK]人的了大中国，[MASK]。'];

/**
 * Our top-k must be the reference's top-k up to `tolerance` (relative): each candidate has the
 * reference probability of its token, no eligible token left out beats the weakest one shown,
 * and `other` is the rest of the mass. Ranks may swap only between near-equal probabilities.
 */
function expectTopK(
  ours: FillMask,
  row: Float64Array,
  ref: Reference,
  count: number,
  tolerance: number,
  keep: (id: number) => boolean = () => true,
) {
  const expected = ref.topK(row, count, keep);
  expect(ours.candidates.length).toBe(expected.length);
  const ids = new Map(Array.from(row.keys(), (id) => [ref.token(id), id]));
  const shown = new Set<number>();
  for (const c of ours.candidates) {
    const id = ids.get(c.token)!;
    expect(ref.eligible(id) && keep(id), `${c.token} should have been filtered`).toBe(true);
    expect(Math.abs(c.score - row[id]!)).toBeLessThanOrEqual(tolerance * row[id]! + 1e-7);
    shown.add(id);
  }
  const scores = ours.candidates.map((c) => c.score);
  expect(scores).toEqual([...scores].sort((a, b) => b - a));
  const weakest = Math.min(...scores);
  const bestLeftOut = Math.max(0, ...expected.filter((e) => !shown.has(e.id)).map((e) => e.p));
  expect(bestLeftOut).toBeLessThanOrEqual(weakest * (1 + tolerance) + 1e-7);
  expect(ours.other).toBeCloseTo(1 - scores.reduce((a, b) => a + b, 0), 5);
}

describe.skipIf(missing !== null)('fill with the tiny model', () => {
  let ref: Reference;
  let refWeb: Reference;
  let wasm: FillMaskModel;
  let native: FillMaskModel;
  let setup: TinyModelSetup;

  beforeAll(async () => {
    setup = await openTinyModel();
    ({ ref, refWeb, wasm, native } = setup);
  });
  afterAll(() => setup?.dispose());

  test('backends: wasm is onnxruntime-web, auto picks onnxruntime-node when installed', () => {
    expect(wasm.stats()).toMatchObject({ backend: 'wasm', threads: 2, simd: true, core: { build: 'single' } });
    expect(native.stats()).toMatchObject({ backend: 'native', threads: 1 });
    expect(native.stats().model).toMatchObject({ name: 'tiny-random', vocabSize: 1626, maxLength: 128 });
  });

  test('wasm results match the reference (onnxruntime-web run directly + HF tokenizer + JS top-k)', async () => {
    for (const text of TEXTS) {
      const result = await wasm.fill(text, { topK: 8 });
      const rows = await refWeb.probabilities(text);
      expect(result.masks.length).toBe(rows.length);
      result.masks.forEach((mask, i) => expectTopK(mask, rows[i]!, refWeb, 8, 1e-5));
    }
  });

  test('native results equal the reference exactly (same runtime, same ids)', async () => {
    for (const text of TEXTS) {
      const result = await native.fill(text, { topK: 10 });
      const rows = await ref.probabilities(text);
      result.masks.forEach((mask, i) => {
        const expected = ref.topK(rows[i]!, 10);
        expect(mask.candidates.map((c) => c.token)).toEqual(expected.map((e) => e.token));
        mask.candidates.forEach((c, k) => expect(c.score).toBeCloseTo(expected[k]!.p, 6));
      });
    }
  });

  test('several masks: one model run, each mask with its own top-k, offsets and sequences', async () => {
    const text = '春[MASK]不觉晓，处处闻 ［MASK］ 鸟，[mask]。';
    const runs = wasm.stats().runs;
    const result = await wasm.fill(text, { topK: 3 });
    expect(wasm.stats().runs).toBe(runs + 1);
    expect(result.masks.map((m) => text.slice(m.start, m.end))).toEqual(['[MASK]', '［MASK］', '[mask]']);
    expect(result.masks.map((m) => m.index)).toEqual([0, 1, 2]);
    expect(result.other).toEqual(result.masks.map((m) => m.other));
    for (const mask of result.masks) {
      expect(mask.candidates).toHaveLength(3);
      for (const c of mask.candidates)
        expect(c.sequence).toBe(text.slice(0, mask.start) + c.token + text.slice(mask.end));
    }
    const rows = await refWeb.probabilities(text.replace('［MASK］', '[MASK]').replace('[mask]', '[MASK]'));
    result.masks.forEach((mask, i) => expectTopK(mask, rows[i]!, refWeb, 3, 1e-5));
    expect(result.timings.inferenceMs).toBeGreaterThan(0);
    expect(result.timings.totalMs).toBeGreaterThanOrEqual(result.timings.inferenceMs);
  });

  test('cache hit: identical result without a model run', async () => {
    const text = '明月[MASK]光，秋天。';
    const first = await wasm.fill(text, { topK: 4 });
    const before = wasm.stats();
    const second = await wasm.fill(text, { topK: 4 });
    expect(first.cached).toBe(false);
    expect(second.cached).toBe(true);
    expect(second.masks).toEqual(first.masks);
    expect(second.timings.inferenceMs).toBe(0);
    expect(wasm.stats().runs).toBe(before.runs);
    expect(wasm.stats().cache.hits).toBe(before.cache.hits + 1);
    // Same tokens, different text: cached ids, but offsets and sequences follow the new text.
    const spaced = await wasm.fill(' 明月 [MASK] 光，秋天。', { topK: 4 });
    expect(spaced.cached).toBe(true);
    expect(spaced.masks[0]!.candidates.map((c) => c.score)).toEqual(first.masks[0]!.candidates.map((c) => c.score));
    expect(spaced.masks[0]!.candidates[0]!.sequence).toBe(` 明月 ${first.masks[0]!.candidates[0]!.token} 光，秋天。`);
    // Different options are a different cache entry.
    expect((await wasm.fill(text, { topK: 2 })).cached).toBe(false);
  });

  test('fillBatch equals fill per text, in order', async () => {
    const texts = ['[MASK]天', '秋[MASK]', '中[MASK]人'];
    const batch = await native.fillBatch(texts, { topK: 3 });
    expect(batch.map((r) => r.text)).toEqual(texts);
    for (const [i, text] of texts.entries())
      expect(batch[i]!.masks).toEqual((await native.fill(text, { topK: 3 })).masks);
  });

  test('threshold hides low candidates and counts them in other', async () => {
    const text = '处处[MASK]鸟';
    const [row] = await ref.probabilities(text);
    const top = ref.topK(row!, 20);
    const threshold = (top[2]!.p + top[3]!.p) / 2; // between the 3rd and 4th: 3 remain
    const result = await native.fill(text, { topK: 20, threshold });
    expect(result.masks[0]!.candidates.map((c) => c.token)).toEqual(top.slice(0, 3).map((t) => t.token));
    expect(result.masks[0]!.other).toBeCloseTo(1 - top.slice(0, 3).reduce((a, t) => a + t.p, 0), 5);
  });

  test('filters: chinese, no-punctuation, allow/deny lists', async () => {
    const text = '[MASK]';
    const [row] = await ref.probabilities(text);
    const han = (id: number) => /^\p{Unified_Ideograph}$/u.test(ref.token(id));
    const punct = (id: number) => /^[\p{P}\p{S}]+$/u.test(ref.token(id));
    const chinese = await native.fill(text, { topK: 50, filter: 'chinese' });
    expectTopK(chinese.masks[0]!, row!, ref, 50, 1e-5, han);
    const noPunct = await native.fill(text, { topK: 200, filter: 'no-punctuation' });
    expectTopK(noPunct.masks[0]!, row!, ref, 200, 1e-5, (id) => !punct(id));
    const allow = ['春', '秋', '，', 'A'];
    const allowed = await native.fill(text, { topK: 10, filter: { allow, deny: ['秋'] } });
    expect(allowed.masks[0]!.candidates.map((c) => c.token).sort()).toEqual(['A', '春', '，'].sort());
  });

  test('lone surrogates become U+FFFD; offsets still index the input', async () => {
    const text = '\uD800春[MASK]\uDFFF';
    const result = await native.fill(text, { topK: 1 });
    expect(result.text).toBe('\uFFFD春[MASK]\uFFFD');
    expect(result.masks[0]).toMatchObject({ start: 2, end: 8 });
  });
});
