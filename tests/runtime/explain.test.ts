// explain() (occlusion attribution) of the built package, checked against an independent
// computation: HF `tokenizers` ids with each token replaced by [MASK] by hand, run one at a time
// through onnxruntime-node (or onnxruntime-web for the wasm backend), log-softmax in plain JS.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ExplainResult, FillMaskModel } from '../../web/src/index.js';
import { Reference, api, missingPrerequisite, openTinyModel, repoRoot, type TinyModelSetup } from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);
const DEFAULT_MODEL = join(repoRoot, 'model', 'default');
const hasDefaultModel = existsSync(join(DEFAULT_MODEL, 'model.onnx'));

/** The reference drop of every content token (null for [MASK]), by occluding HF ids and running each alone. */
async function referenceExplain(ref: Reference, text: string, maskIndex: number, token: string) {
  const { tokens, ids, offsets } = await ref.encodeFull(text);
  const masks = ids.flatMap((id, i) => (id === ref.maskTokenId ? [i] : []));
  const target = masks[maskIndex]!;
  const candidate = ref.tokenId(token);
  const logProbOf = async (input: number[]) => (await ref.logSoftmaxRows(input, [target]))[0]![candidate]!;
  const logProb = await logProbOf(ids);
  const scores: (number | null)[] = [];
  for (let i = 1; i < ids.length - 1; i++) {
    scores.push(
      ids[i] === ref.maskTokenId
        ? null
        : logProb - (await logProbOf(ids.map((id, j) => (j === i ? ref.maskTokenId : id)))),
    );
  }
  return { tokens: tokens.slice(1, -1), offsets: offsets.slice(1, -1), logProb, scores };
}

async function expectMatchesReference(ours: ExplainResult, ref: Reference, tolerance: number) {
  const expected = await referenceExplain(ref, ours.text, ours.maskIndex, ours.token);
  expect(ours.method).toBe('occlusion');
  expect(ours.tokens.map((t) => t.token)).toEqual(expected.tokens);
  expect(ours.tokens.map((t) => [t.start, t.end])).toEqual(expected.offsets);
  expect(Math.abs(ours.logProb - expected.logProb)).toBeLessThanOrEqual(tolerance);
  ours.tokens.forEach((t, i) => {
    if (expected.scores[i] === null) expect(t.score).toBeNull();
    else expect(Math.abs(t.score! - expected.scores[i]!), `token ${i} ${t.token}`).toBeLessThanOrEqual(tolerance);
  });
  // top: the 3 highest positive reference scores (compared as a set of scores, robust to exact ties).
  const positive = expected.scores
    .filter((s): s is number => s !== null && s > 0)
    .sort((a, b) => b - a)
    .slice(0, 3);
  expect(ours.top.length).toBe(positive.length);
  ours.top.forEach((index, rank) =>
    expect(Math.abs(expected.scores[index]! - positive[rank]!)).toBeLessThanOrEqual(2 * tolerance),
  );
}

describe.skipIf(missing !== null)('explain with the tiny model', () => {
  let ref: Reference;
  let refWeb: Reference;
  let native: FillMaskModel;
  let wasm: FillMaskModel;
  let uncached: FillMaskModel;
  let setup: TinyModelSetup;

  beforeAll(async () => {
    setup = await openTinyModel();
    ({ ref, refWeb, native, wasm } = setup);
    uncached = await (
      await api()
    ).createFillMask({ model: setup.dir, backend: 'auto', threads: 1, cache: { maxEntries: 0, maxBytes: 0 } });
  });
  afterAll(async () => {
    await Promise.all([setup?.dispose(), uncached?.dispose()]);
  });

  test('native: every score is the drop computed independently (same runtime: equal to 1e-9)', async () => {
    const cases: [string, number][] = [
      ['春眠不觉晓，处处闻啼[MASK]。', 0],
      ['掩耳[MASK][MASK]，自欺欺人', 1],
      ['[MASK]天', 0],
    ];
    for (const [text, maskIndex] of cases) {
      const token = (await native.fill(text, { topK: 1 })).masks[maskIndex]!.candidates[0]!.token;
      await expectMatchesReference(await native.explain(text, maskIndex, token), ref, 1e-9);
    }
  });

  test('wasm: matches the same computation on onnxruntime-web', async () => {
    const text = '床前明月[MASK]，疑是地上霜。';
    await expectMatchesReference(await wasm.explain(text, 0, '光'), refWeb, 1e-5);
  });

  test('runs once per non-mask token plus once (dynamic INT8: isolated runs); deterministic; mask tokens score null', async () => {
    const text = '春[MASK]不觉[MASK]晓';
    const runs = uncached.stats().runs;
    const first = await uncached.explain(text, 1, '春');
    expect(first.timings.runs).toBe(4 + 1); // 4 non-mask tokens + the unmodified text
    expect(uncached.stats().runs).toBe(runs + 5);
    expect(first.tokens.map((t) => t.score === null)).toEqual([false, true, false, false, true, false]);
    const second = await uncached.explain(text, 1, '春');
    expect(second.cached).toBe(false);
    const { timings: _a, ...a } = first;
    const { timings: _b, ...b } = second;
    expect(b).toEqual(a);
    expect(first.tokens.map((t) => text.slice(t.start, t.end))).toEqual(['春', '[MASK]', '不', '觉', '[MASK]', '晓']);
  });

  test('cache: same ids, mask and candidate hit; offsets follow the new text; other candidates miss', async () => {
    const text = '明月[MASK]光';
    const first = await native.explain(text, 0, '的');
    const runs = native.stats().runs;
    const again = await native.explain(' 明月 [MASK] 光', 0, '的');
    expect(again.cached).toBe(true);
    expect(native.stats().runs).toBe(runs);
    expect(again.tokens.map((t) => t.score)).toEqual(first.tokens.map((t) => t.score));
    expect(again.tokens.map((t) => [t.start, t.end])).toEqual([
      [1, 2],
      [2, 3],
      [4, 10],
      [11, 12],
    ]);
    expect((await native.explain(text, 0, '月')).cached).toBe(false);
    // The fill cache and the explain cache do not answer for each other.
    expect((await native.fill(text)).cached).toBe(false);
  });

  test('errors name the problem', async () => {
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e) => `${e.code}: ${e.message}`,
      );
    expect(await code(native.explain('春[MASK]', 1, '天'))).toMatch(
      /^BAD_OPTION: .*maskIndex must be an integer from 0 to 0 \(the text has 1 \[MASK\]\), got 1/,
    );
    expect(await code(native.explain('春[MASK]', 0.5, '天'))).toMatch(/^BAD_OPTION: .*maskIndex/);
    expect(await code(native.explain('春[MASK]', 0, '不存在的词'))).toMatch(
      /^BAD_OPTION: .*"不存在的词" is not in the model's vocabulary/,
    );
    expect(await code(native.explain('春天', 0, '天'))).toMatch(/^NO_MASK/);
    expect(await code(native.explain('', 0, '天'))).toMatch(/^EMPTY_INPUT/);
    expect(await code(native.explain('春[MASK]', 0, '天', null as never))).toMatch(
      /^BAD_OPTION: .*options must be an object/,
    );
    const controller = new AbortController();
    controller.abort('superseded');
    expect(await code(native.explain('春[MASK]天', 0, '天', { signal: controller.signal }))).toMatch(/^ABORTED/);
  });
});

describe.skipIf(missing !== null || !hasDefaultModel)('explain with the default model', () => {
  test('scores equal the independently computed drop; variants share batched runs', async () => {
    const { createFillMask } = await api();
    const ref = await Reference.create(DEFAULT_MODEL);
    const tk = await createFillMask({ model: DEFAULT_MODEL, backend: 'auto', threads: 2 });
    try {
      // The default model computes in float32 (fp16-weights): the text and its occluded copies share
      // batched runs of up to 16 variants and 128 tokens (session.ts: maxBatch, maxBatchTokens);
      // the reference runs each alone.
      const cases: [string, string, number][] = [
        ['掩耳盗[MASK]', '铃', 1], // 4 variants of 6 tokens: one run
        ['春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知[MASK]少。', '多', 6], // 23 + 1 variants of 26 tokens: 4 per run
      ];
      for (const [text, token, runs] of cases) {
        const result = await tk.explain(text, 0, token);
        expect(result.timings.runs).toBe(runs);
        // The default model is a core graph: the C++ core computes the output layer in float32 from
        // its stored table (f16 or int8 × int16), the reference in float64 from the same table
        // (measured differences ≤ 2e-4 in a log-probability drop).
        await expectMatchesReference(result, ref, 2e-3);
      }
    } finally {
      await tk.dispose();
    }
  });
});
