// @ts-check
// What scripts/tune-check and scripts/evaluate-check share: a model directory opened with the
// product's own engine (dist/, the same code as tk.check), each case's scoring computed once
// (engine.checkScores), and the check's own decision rule (dist/engine/check.js: decide) applied
// to it for any rule, so a grid of rules costs no model runs.
//
//   const ev = await openCheckEvaluator('model/default', { threads: 2 });
//   const scored = await ev.score(cases);                 // once per case
//   const results = ev.apply(scored, rule);               // { corrections }[] for scoreCheck
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './data-paths.mjs';

/**
 * @typedef {{ prefilter: number, threshold: number, penalty: Record<string, number>, suppressWithin: number, maskedShare: number, maskedMin: number }} CheckRule
 * @typedef {{ text: string, offsets: Uint32Array, scored: { position: number, candidates: { id: number, kind: string, gain: number }[] }[] }} ScoredCase
 */

/** Reads a check set written by scripts/build-check-set (one JSON case per line). */
export function readCheckSet(path) {
  if (!existsSync(path)) throw new Error(`${path} missing: run scripts/build-check-set`);
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

/**
 * Opens `modelDir` with the built runtime's engine (in this thread). `threads`: inference
 * threads; `memory`: fuse the corpus memory (default true).
 */
export async function openCheckEvaluator(modelDir, { threads = 2, memory = true } = {}) {
  const dist = join(REPO_ROOT, 'dist');
  if (!existsSync(join(dist, 'node.js'))) throw new Error(`${dist}/node.js missing: run scripts/build-js`);
  const { openNodeEngine } = await import(pathToFileURL(join(dist, 'node.js')).href);
  const check = await import(pathToFileURL(join(dist, 'engine/check.js')).href);
  const { engine } = await openNodeEngine({ model: modelDir, threads, memory });
  const vocab = readFileSync(join(modelDir, 'vocab.txt'), 'utf8').split('\n');
  const modelRule = check.modelRule(JSON.parse(readFileSync(join(modelDir, 'model.json'), 'utf8')).check);
  return {
    engine,
    /** The rule the runtime uses for `modelDir` at sensitivity 0.5 (its model.json "check", else the default). */
    rule: /** @type {CheckRule} */ (modelRule),
    /** The rule at another sensitivity (0..1), as tk.check applies it. */
    ruleAt: (/** @type {number} */ sensitivity) => /** @type {CheckRule} */ (check.ruleFor(sensitivity, modelRule)),
    /**
     * Each case's scoring (cases[i].text), in order; `onCase(done)` after each.
     * @param {{ text: string }[]} cases
     * @param {(done: number) => void} [onCase]
     * @returns {Promise<ScoredCase[]>}
     */
    async score(cases, onCase) {
      const out = [];
      for (const c of cases) {
        out.push(await engine.checkScores(c.text, memory));
        onCase?.(out.length);
      }
      return out;
    },
    /**
     * The corrections `rule` gives each scored case (what tk.check would return, without its
     * keep-list), as scoreCheck takes them.
     * @param {ScoredCase[]} scored
     * @param {CheckRule} rule
     */
    apply(scored, rule) {
      return scored.map(({ text, offsets, scored: positions }) => ({
        corrections: check.decide(positions, rule).map((/** @type {any} */ flag) => {
          const start = offsets[2 * flag.position];
          const end = offsets[2 * flag.position + 1];
          return { start, end, original: text.slice(start, end), suggestion: vocab[flag.candidates[0].id] };
        }),
      }));
    },
    /**
     * The positions (indices into a case's `scored`) a rule scores masked: its prefilter and masking budget.
     * @param {number[]} suspicions
     * @param {CheckRule} rule
     * @returns {Set<number>}
     */
    maskedSelection: (suspicions, rule) => check.maskedSelection(suspicions, rule),
    dispose: () => engine.dispose(),
  };
}
