/**
 * Occlusion attribution: how much each context token of a text supports one candidate at one
 * [MASK]. For every content token i, the token is replaced by [MASK] and the model scores that
 * copy too; the token's score is
 *
 *   score_i = log P(candidate | text) − log P(candidate | text with token i replaced by [MASK])
 *
 * (natural log, softmax over the full vocabulary at the target mask). Positive = the token
 * supports the candidate; negative = the candidate is likelier without it.
 *
 * Why replace with [MASK] rather than drop the token: the sequence keeps its length, so every
 * other token keeps its position embedding (dropping shifts everything after i, mixing "what the
 * token says" with "where its neighbours sit"), and [MASK] is the input the model was trained to
 * read as "something unknown is here" — the closest in-distribution way to remove information.
 *
 * Why the variants share batched runs (ModelSession.variants: the text and its occluded copies,
 * all of one length, up to `maxBatch` per run) on most models but not all: a graph that computes
 * in float32 (model.json quantization "none", "fp16-weights", "int8-weights" — weights stored small,
 * widened to float32 when the session starts; the shipped default) treats every row of a batch
 * alone, so a batched run gives each variant its own run's numbers within float32 rounding (tests:
 * tests/runtime/variants.test.ts), for a fraction of the time per variant (bench/variants-bench.mjs,
 * docs/lean-graph.md). A dynamic-INT8 graph ("int8-dynamic-per-channel") quantizes activations per
 * tensor (DynamicQuantizeLinear), so in a batch every variant's quantization scale would depend on
 * all the others. Measured (scripts/bench-explain, docs/attribution-and-joint.md): the batched drop
 * differed from the variant's own drop by as much as the weaker scores themselves, reordering the
 * top 3. Such models keep one isolated run per variant. Either way each score is the drop `fill()`
 * would show for that occluded text.
 */
import type { Variant } from './session.js';

/** One forward pass of the mask-only graph on one sequence: logits [positions.length, vocabSize]. */
export type MaskedLogits = (ids: Int32Array, positions: Int32Array) => Promise<Float32Array>;

/**
 * Logits [positions.length, vocabSize] of each of several same-length variants (ModelSession.variants):
 * batched runs where the model allows it; `beforeRun` is awaited before every model run.
 */
export type VariantLogits = (
  batch: readonly Variant[],
  beforeRun?: () => Promise<void> | void,
) => Promise<Float32Array[]>;

/** Token-level attribution of one candidate at one mask (positions index `ids`). */
export interface Occlusion {
  /** log P(candidate) at the target mask in the unmodified text. */
  logProb: number;
  /**
   * One entry per content token (ids[1] … ids[n-2], i.e. without [CLS] and [SEP]): the drop in
   * log-probability when that token is replaced by [MASK]; null for [MASK] tokens (nothing to occlude).
   */
  scores: (number | null)[];
}

/**
 * Occlusion scores of `candidateId` at position `target` of `ids` ([CLS] … [SEP]): the text and one
 * copy per non-mask content token with that token replaced by `maskId`, scored by `logits` in
 * groups of `chunk` variants (the text first), each group's rows reduced to log-probabilities
 * before the next is asked for (so at most `chunk` logit rows are held). `beforeRun` is passed on:
 * awaited before every model run, it yields to the event loop and throws to stop a cancelled
 * request (run-queue.ts: TaskContext.checkpoint).
 */
export async function occlude(
  logits: VariantLogits,
  ids: Int32Array,
  target: number,
  candidateId: number,
  maskId: number,
  vocabSize: number,
  beforeRun: () => Promise<void> | void = () => undefined,
  chunk = 32,
): Promise<Occlusion> {
  const positions = Int32Array.of(target);
  const occluded: number[] = []; // the content positions occluded, in order
  for (let i = 1; i < ids.length - 1; i++) if (ids[i] !== maskId) occluded.push(i);
  const variantAt = (k: number): Variant => {
    if (k === 0) return { ids, positions };
    const copy = ids.slice();
    copy[occluded[k - 1]!] = maskId;
    return { ids: copy, positions };
  };
  const logProbs = new Float64Array(occluded.length + 1); // [text, occluded...]
  const size = Math.max(1, Math.floor(chunk));
  for (let start = 0; start < logProbs.length; start += size) {
    const batch = Array.from({ length: Math.min(size, logProbs.length - start) }, (_, k) => variantAt(start + k));
    const rows = await logits(batch, beforeRun);
    rows.forEach((row, k) => (logProbs[start + k] = logSoftmaxAt(row, 0, vocabSize, candidateId)));
  }
  const logProb = logProbs[0]!;
  let next = 1;
  const scores: (number | null)[] = [];
  for (let i = 1; i < ids.length - 1; i++) scores.push(ids[i] === maskId ? null : logProb - logProbs[next++]!);
  return { logProb, scores };
}

/** log softmax(row)[id] of row `row` of a row-major [rows, vocabSize] matrix, accumulated in float64. */
export function logSoftmaxAt(logits: Float32Array, row: number, vocabSize: number, id: number): number {
  const start = row * vocabSize;
  let max = -Infinity;
  for (let v = start; v < start + vocabSize; v++) max = Math.max(max, logits[v]!);
  let sum = 0;
  for (let v = start; v < start + vocabSize; v++) sum += Math.exp(logits[v]! - max);
  return logits[start + id]! - max - Math.log(sum);
}

/** Indices of the `count` highest positive scores, highest first (ties: earlier token first). */
export function topScores(scores: readonly (number | null)[], count: number): number[] {
  return scores
    .flatMap((score, index) => (score !== null && score > 0 ? [{ score, index }] : []))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, count)
    .map(({ index }) => index);
}
