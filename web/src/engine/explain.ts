/**
 * Occlusion attribution: how much each context token of a text supports one candidate at one
 * [MASK]. For every content token i, the token is replaced by [MASK] and the model is run again;
 * the token's score is
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
 * Why one model run per variant instead of one batched run: the INT8 model quantizes activations
 * per tensor (DynamicQuantizeLinear), so in a batch every variant's quantization scale depends on
 * all the others. Measured (scripts/bench-explain, docs/attribution-and-joint.md): the batched drop
 * differs from the variant's own drop by as much as the weaker scores themselves, reordering the
 * top 3. Isolated runs make each score exactly the drop `fill()` would show for that occluded text.
 */
/** One forward pass of the mask-only graph on one sequence: logits [positions.length, vocabSize]. */
export type MaskedLogits = (ids: Int32Array, positions: Int32Array) => Promise<Float32Array>;

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
 * Occlusion scores of `candidateId` at position `target` of `ids` ([CLS] … [SEP]): one run on the
 * text, then one run per non-mask content token with that token replaced by `maskId`.
 * `beforeRun` is awaited before every run: it yields to the event loop and throws to stop a
 * cancelled request (run-queue.ts: TaskContext.checkpoint).
 */
export async function occlude(
  logits: MaskedLogits,
  ids: Int32Array,
  target: number,
  candidateId: number,
  maskId: number,
  vocabSize: number,
  beforeRun: () => Promise<void> | void = () => undefined,
): Promise<Occlusion> {
  const positions = Int32Array.of(target);
  const logProbOf = async (input: Int32Array) => {
    await beforeRun();
    return logSoftmaxAt(await logits(input, positions), 0, vocabSize, candidateId);
  };
  const logProb = await logProbOf(ids);
  const scores: (number | null)[] = [];
  const occluded = ids.slice();
  for (let i = 1; i < ids.length - 1; i++) {
    if (ids[i] === maskId) {
      scores.push(null);
      continue;
    }
    occluded[i] = maskId;
    scores.push(logProb - (await logProbOf(occluded)));
    occluded[i] = ids[i]!;
  }
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
