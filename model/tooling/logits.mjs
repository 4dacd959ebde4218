// @ts-check
// Softmax and top-k over one row of logits, for the tooling that reads model outputs directly
// (model validation, benchmarks). One implementation here; the product does this in the C++
// decoder, and the test suites keep their own independent oracles on purpose.
// A row is any array-like of numbers, e.g. `data.subarray(row * vocab, (row + 1) * vocab)`.

/**
 * Index of the largest value (the first one on ties).
 * @param {ArrayLike<number>} row
 * @returns {number}
 */
export function argmax(row) {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

/**
 * Indices of the `k` largest values, largest first (ties: the lower index first).
 * @param {ArrayLike<number>} row
 * @param {number} k
 * @returns {number[]}
 */
export function topK(row, k) {
  /** @type {number[]} */
  const best = [];
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (best.length === k && !(v > row[best[k - 1]])) continue;
    let at = best.length;
    while (at > 0 && v > row[best[at - 1]]) at--;
    best.splice(at, 0, i);
    if (best.length > k) best.pop();
  }
  return best;
}

/**
 * log(softmax(row)), computed in double precision.
 * @param {ArrayLike<number>} row
 * @returns {Float64Array}
 */
export function logSoftmax(row) {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i] - max);
  const logZ = max + Math.log(sum);
  return Float64Array.from(row, (v) => v - logZ);
}

/**
 * The `k` most probable ids of the row with their softmax probabilities, most probable first.
 * @param {ArrayLike<number>} row
 * @param {number} k
 * @returns {Array<{id: number, p: number}>}
 */
export function softmaxTopK(row, k) {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i] - max);
  return topK(row, k).map((id) => ({ id, p: Math.exp(row[id] - max) / sum }));
}

/**
 * KL(p || q) in nats, from log-probabilities.
 * @param {ArrayLike<number>} logP
 * @param {ArrayLike<number>} logQ
 * @returns {number}
 */
export function klDivergence(logP, logQ) {
  let total = 0;
  for (let i = 0; i < logP.length; i++) total += Math.exp(logP[i]) * (logP[i] - logQ[i]);
  return total;
}
