/**
 * Joint decoding of a run of adjacent masks (e.g. 掩耳[MASK][MASK] → 盗铃): the masks are filled
 * one at a time, most confident position first, each step re-running the model with the tokens
 * chosen so far in place, under a small beam. A whole-word candidate w of an n-mask run scores
 *
 *   score(w) = ∏_{t=1..n} P(x_{j_t} = w_{j_t} | the text with w_{j_1} … w_{j_{t-1}} filled in)
 *
 * where P is the softmax over the full vocabulary (the probability `fill()` reports) and j_t is
 * the still-masked position of the run whose best eligible candidate (same filter as the mask
 * lists) is the most probable in that same context, the leftmost one on ties. Masks outside the
 * run stay [MASK] throughout. The order depends only on the tokens already chosen, so every fill
 * has exactly one path and one score; `beam: 1` is plain iterative (greedy) filling.
 *
 * Each hypothesis is its own model run, not a row of one batch: the INT8 model quantizes
 * activations per tensor, so batched hypotheses would change each other's probabilities (see
 * explain.ts and docs/attribution-and-joint.md for the measurement).
 */
import type { DecodedRow } from '../core/core-module.js';
import type { MaskedLogits } from './explain.js';

/**
 * The eligible top candidates of each logits row, best first (the core's decoder for the request's
 * filter, fused with the memory when it is on): `sequence` is the hypothesis's whole input and
 * `positions` the masks the rows belong to, so the memory reads the tokens chosen so far.
 */
export type RowDecoder = (
  logits: Float32Array,
  rows: number,
  sequence: Int32Array,
  positions: Int32Array,
) => DecodedRow[];

/** One filled run: token ids in run order (left to right) and the joint score defined above. */
export interface JointFill {
  ids: number[];
  score: number;
}

interface Hypothesis {
  /** The whole sequence with this hypothesis's tokens in place. */
  sequence: Int32Array;
  /** Token per run slot, -1 while still masked. */
  fill: number[];
  logScore: number;
}

/** Indices of the masks forming runs of two or more masks at consecutive token positions. */
export function adjacentMaskRuns(maskPositions: Int32Array): number[][] {
  const runs: number[][] = [];
  let current: number[] = [];
  maskPositions.forEach((position, index) => {
    if (current.length > 0 && position !== maskPositions[current[current.length - 1]!]! + 1) {
      if (current.length > 1) runs.push(current);
      current = [];
    }
    current.push(index);
  });
  if (current.length > 1) runs.push(current);
  return runs;
}

/**
 * Beam search over the run at `positions` (consecutive, all [MASK] in `ids`): at most `beam`
 * hypotheses kept per step, each expanded with the `decode` candidates (which must return at
 * least `beam` per row when that many are eligible) of its most confident open position.
 * Returns the final hypotheses, best first (ties: smaller token ids first). Runs the model
 * 1 + beam·(n−1) times at most; `beforeRun` is awaited before each run (it yields to the event
 * loop and throws to stop a cancelled request: run-queue.ts, TaskContext.checkpoint).
 */
export async function decodeRunJointly(
  logits: MaskedLogits,
  decode: RowDecoder,
  ids: Int32Array,
  positions: readonly number[],
  beam: number,
  beforeRun: () => Promise<void> | void = () => undefined,
): Promise<JointFill[]> {
  let hypotheses: Hypothesis[] = [{ sequence: ids.slice(), fill: positions.map(() => -1), logScore: 0 }];
  for (let step = 0; step < positions.length; step++) {
    const expansions: Hypothesis[] = [];
    for (const hypothesis of hypotheses) {
      const open = positions.flatMap((_, slot) => (hypothesis.fill[slot] === -1 ? [slot] : []));
      await beforeRun();
      const openPositions = Int32Array.from(open, (slot) => positions[slot]!);
      const rows = decode(
        await logits(hypothesis.sequence, openPositions),
        open.length,
        hypothesis.sequence,
        openPositions,
      );
      const chosen = mostConfident(rows);
      if (chosen < 0) continue;
      const slot = open[chosen]!;
      const { ids: candidates, probabilities } = rows[chosen]!;
      candidates.forEach((id, k) => {
        const sequence = hypothesis.sequence.slice();
        sequence[positions[slot]!] = id;
        const fill = hypothesis.fill.slice();
        fill[slot] = id;
        expansions.push({ sequence, fill, logScore: hypothesis.logScore + Math.log(probabilities[k]!) });
      });
    }
    hypotheses = expansions.sort(byScoreThenIds).slice(0, beam);
  }
  return hypotheses.map(({ fill, logScore }) => ({ ids: fill, score: Math.exp(logScore) }));
}

/** The row whose best candidate is the most probable (first on ties), -1 if no row has a candidate. */
function mostConfident(rows: readonly DecodedRow[]): number {
  let best = -1;
  let bestProbability = -1;
  rows.forEach((row, index) => {
    if (row.ids.length > 0 && row.probabilities[0]! > bestProbability) {
      best = index;
      bestProbability = row.probabilities[0]!;
    }
  });
  return best;
}

function byScoreThenIds(a: Hypothesis, b: Hypothesis): number {
  if (a.logScore !== b.logScore) return b.logScore - a.logScore;
  for (let slot = 0; slot < a.fill.length; slot++)
    if (a.fill[slot] !== b.fill[slot]) return a.fill[slot]! - b.fill[slot]!;
  return 0;
}
