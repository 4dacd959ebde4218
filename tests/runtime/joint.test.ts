// fill({ joint: true }) of the built package: whole-word candidates for runs of adjacent masks,
// checked against a brute-force enumeration of the documented score (types.ts WordCandidate.score)
// computed independently: HF `tokenizers` ids, one onnxruntime-node run per partial fill,
// softmax in plain JS. With a small allow-list and a beam as wide as the candidate set, beam
// search is exhaustive, so its list must equal the enumeration's top list.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillMaskModel, FillWord } from '../../web/src/index.js';
import { Reference, api, missingPrerequisite, openTinyModel, repoRoot, type TinyModelSetup } from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);
const DEFAULT_MODEL = join(repoRoot, 'model', 'default');
const hasDefaultModel = existsSync(join(DEFAULT_MODEL, 'model.onnx'));

/**
 * The joint score of `fill` (a token id per mask of the run, left to right), by the definition:
 * repeatedly pick the open mask whose best eligible token is the most probable (leftmost on ties),
 * multiply in the probability of `fill`'s token there, put it in, re-run.
 */
async function referenceScore(
  ref: Reference,
  ids: number[],
  positions: number[],
  fill: number[],
  eligible: (id: number) => boolean,
): Promise<number> {
  const sequence = ids.slice();
  const open = positions.map((_, slot) => slot);
  let logScore = 0;
  while (open.length > 0) {
    const rows = await ref.logSoftmaxRows(
      sequence,
      open.map((slot) => positions[slot]!),
    );
    const confidence = rows.map((row) =>
      Math.max(
        ...Array.from(row.keys())
          .filter(eligible)
          .map((id) => row[id]!),
      ),
    );
    const chosen = confidence.indexOf(Math.max(...confidence));
    const slot = open[chosen]!;
    logScore += rows[chosen]![fill[slot]!]!;
    sequence[positions[slot]!] = fill[slot]!;
    open.splice(chosen, 1);
  }
  return Math.exp(logScore);
}

/** Every fill of the run from `tokens`, with its reference score, best first. */
async function enumerate(ref: Reference, text: string, maskIndices: number[], tokens: string[]) {
  const ids = await ref.encode(text);
  const masks = ids.flatMap((id, i) => (id === ref.maskTokenId ? [i] : []));
  const positions = maskIndices.map((index) => masks[index]!);
  const allowed = new Set(tokens.map((t) => ref.tokenId(t)));
  let fills: number[][] = [[]];
  for (let i = 0; i < positions.length; i++) fills = fills.flatMap((f) => [...allowed].map((id) => [...f, id]));
  const scored = [];
  for (const fill of fills) {
    scored.push({
      text: fill.map((id) => ref.token(id)).join(''),
      score: await referenceScore(ref, ids, positions, fill, (id) => allowed.has(id)),
    });
  }
  return scored.sort((a, b) => b.score - a.score);
}

function expectScoresClose(actual: number[], expected: number[]) {
  expect(actual.length).toBe(expected.length);
  // The engine multiplies float32 probabilities from the core's decoder; the reference is float64.
  actual.forEach((score, i) => expect(Math.abs(score - expected[i]!)).toBeLessThanOrEqual(1e-5 * expected[i]!));
}

describe.skipIf(missing !== null)('joint decoding with the tiny model', () => {
  let ref: Reference;
  let refWeb: Reference;
  let native: FillMaskModel;
  let wasm: FillMaskModel;
  let setup: TinyModelSetup;

  beforeAll(async () => {
    setup = await openTinyModel();
    ({ ref, refWeb, native, wasm } = setup);
  });
  afterAll(() => setup?.dispose());

  test('two masks, restricted candidates, exhaustive beam: equals the brute-force top list', async () => {
    const text = '掩耳[MASK][MASK]，自欺欺人';
    const allow = ['盗', '大', '的', '人', '天', '不'];
    const result = await native.fill(text, { joint: true, beam: allow.length, topK: 6, filter: { allow } });
    const expected = (await enumerate(ref, text, [0, 1], allow)).slice(0, 6);
    const [word] = result.words!;
    expect(word!.candidates.map((c) => c.text)).toEqual(expected.map((e) => e.text));
    expectScoresClose(
      word!.candidates.map((c) => c.score),
      expected.map((e) => e.score),
    );
  });

  test('three masks, exhaustive beam: equals the brute-force top list (also on onnxruntime-web)', async () => {
    const text = '春[MASK][MASK][MASK]晓';
    const allow = ['春', '不', '觉', '天'];
    for (const [tk, reference] of [
      [native, ref],
      [wasm, refWeb],
    ] as const) {
      const result = await tk.fill(text, { joint: true, beam: 16, topK: 16, filter: { allow } });
      const expected = (await enumerate(reference, text, [0, 1, 2], allow)).slice(0, 16);
      expect(result.words![0]!.candidates.map((c) => c.text)).toEqual(expected.map((e) => e.text));
      expectScoresClose(
        result.words![0]!.candidates.map((c) => c.score),
        expected.map((e) => e.score),
      );
    }
  });

  test('full vocabulary: valid multi-character words whose scores follow the definition', async () => {
    const text = '他们[MASK][MASK]地走了。';
    const result = await native.fill(text, { joint: true, beam: 3, topK: 3 });
    const [word] = result.words!;
    expect(word).toMatchObject({ start: 2, end: 14, maskIndices: [0, 1] });
    expect(word!.candidates).toHaveLength(3);
    const ids = await ref.encode(text);
    const scores = word!.candidates.map((c) => c.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const c of word!.candidates) {
      expect(c.tokens).toHaveLength(2);
      expect(c.text).toBe(c.tokens.join(''));
      expect([...c.text].length).toBeGreaterThanOrEqual(2);
      expect(c.sequence).toBe(`他们${c.text}地走了。`);
      const fill = c.tokens.map((t) => ref.tokenId(t));
      for (const id of fill) expect(ref.eligible(id), `${ref.token(id)} is not a fill token`).toBe(true);
      const expected = await referenceScore(ref, ids, [3, 4], fill, (id) => ref.eligible(id));
      expect(Math.abs(c.score - expected)).toBeLessThanOrEqual(1e-5 * expected);
    }
  });

  test('beam 1 is greedy iterative filling: the most confident mask first, its best token, re-run', async () => {
    const text = '[MASK][MASK][MASK]天';
    const result = await native.fill(text, { joint: true, beam: 1 });
    const ids = await ref.encode(text);
    const sequence = ids.slice();
    const open = [1, 2, 3];
    let score = 1;
    while (open.length > 0) {
      const rows = await ref.logSoftmaxRows(sequence, open);
      const best = rows.map((row) => ref.topK(row.map(Math.exp), 1)[0]!);
      const chosen = best.reduce((b, c, i) => (c.p > best[b]!.p ? i : b), 0);
      sequence[open[chosen]!] = best[chosen]!.id;
      score *= best[chosen]!.p;
      open.splice(chosen, 1);
    }
    const [candidate] = result.words![0]!.candidates;
    expect(candidate!.tokens).toEqual([1, 2, 3].map((p) => ref.token(sequence[p]!)));
    expect(Math.abs(candidate!.score - score)).toBeLessThanOrEqual(1e-5 * score);
  });

  test('runs of adjacent masks only; masks unchanged; one run per hypothesis', async () => {
    const text = '[MASK][MASK]天[MASK]，[MASK] [MASK][MASK]。';
    const plain = await native.fill(text, { topK: 2 });
    const runs = native.stats().runs;
    const result = await native.fill(text, { joint: true, beam: 2, topK: 2 });
    expect(result.masks).toEqual(plain.masks);
    expect(result.cached).toBe(false);
    expect(result.words!.map((w: FillWord) => w.maskIndices)).toEqual([
      [0, 1],
      [3, 4, 5],
    ]);
    expect(result.words!.map((w) => text.slice(w.start, w.end))).toEqual(['[MASK][MASK]', '[MASK] [MASK][MASK]']);
    // masks cached from the plain fill; runs: (1 + 2·1) for the pair + (1 + 2·2) for the triple.
    expect(native.stats().runs - runs).toBe(3 + 5);
    for (const c of result.words![1]!.candidates) expect(c.sequence).toBe(`[MASK][MASK]天[MASK]，${c.text}。`);
  });

  test('cache: a repeated joint fill runs nothing; plain fills carry no words', async () => {
    const text = '明[MASK][MASK]光';
    const first = await native.fill(text, { joint: true, beam: 2 });
    const runs = native.stats().runs;
    const second = await native.fill(text, { joint: true, beam: 2 });
    expect(second.cached).toBe(true);
    expect(native.stats().runs).toBe(runs);
    expect(second.words).toEqual(first.words);
    const plain = await native.fill(text);
    expect(plain.cached).toBe(true);
    expect(plain).not.toHaveProperty('words');
    expect((await native.fill(text, { joint: true, beam: 3 })).cached).toBe(false); // another beam, another entry
    expect((await native.fill('[MASK]天', { joint: true })).words).toEqual([]);
  });

  test('fillBatch decodes words per text like fill', async () => {
    const texts = ['[MASK][MASK]天', '秋[MASK]', '中[MASK][MASK]人'];
    const batch = await native.fillBatch(texts, { joint: true, beam: 2, topK: 2 });
    for (const [i, text] of texts.entries())
      expect(batch[i]!.words).toEqual((await native.fill(text, { joint: true, beam: 2, topK: 2 })).words);
    expect(batch.map((r) => r.words!.length)).toEqual([1, 0, 1]);
  });

  test('option errors', async () => {
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e) => `${e.code}: ${e.message}`,
      );
    expect(await code(native.fill('[MASK][MASK]', { beam: 3 }))).toMatch(
      /^BAD_OPTION: .*beam only applies to joint decoding/,
    );
    expect(await code(native.fill('[MASK][MASK]', { joint: true, beam: 0 }))).toMatch(
      /^BAD_OPTION: .*beam must be an integer from 1 to 32, got 0/,
    );
    expect(await code(native.fill('[MASK][MASK]', { joint: true, beam: 33 }))).toMatch(/^BAD_OPTION: .*got 33/);
    expect(await code(native.fill('[MASK][MASK]', { joint: 'yes' as never }))).toMatch(
      /^BAD_OPTION: .*joint must be true or false/,
    );
  });
});

describe.skipIf(missing !== null || !hasDefaultModel)('joint decoding with the default model', () => {
  test("掩耳[MASK][MASK]: every candidate's score follows the definition", async () => {
    const { createFillMask } = await api();
    const ref = await Reference.create(DEFAULT_MODEL);
    // The reference is the model's definition: the model alone (the memory's fusion is tested in memory.test.ts).
    const tk = await createFillMask({ model: DEFAULT_MODEL, backend: 'auto', threads: 2, memory: false });
    try {
      const text = '掩耳[MASK][MASK]';
      const result = await tk.fill(text, { joint: true, beam: 5, topK: 5, filter: 'chinese' });
      const ids = await ref.encode(text);
      const han = (id: number) => /^\p{Unified_Ideograph}$/u.test(ref.token(id));
      for (const c of result.words![0]!.candidates) {
        const expected = await referenceScore(
          ref,
          ids,
          [3, 4],
          c.tokens.map((t) => ref.tokenId(t)),
          han,
        );
        // Core graph: the core's float32 output layer vs the reference's float64 one (relative ≤ 1e-4 measured).
        expect(Math.abs(c.score - expected)).toBeLessThanOrEqual(2e-3 * expected);
      }
    } finally {
      await tk.dispose();
    }
  });
});
