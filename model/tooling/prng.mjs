// @ts-check
/**
 * Small deterministic PRNG (mulberry32): the same seed gives the same sequence on every
 * machine, so sampled sentences and random test inputs reproduce.
 * @param {number} seed
 * @returns {() => number} uniform numbers in [0, 1)
 */
export function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
