// @ts-check
/**
 * Fuzzes the JS fill() input path of the built package (dist/index.js: wasm core + onnxruntime-web):
 * random calls from the fill-inputs grammar must each resolve to a result that satisfies every
 * invariant, or reject with a TiankongError of a known code and a "tiankong: " message — never
 * anything else — and the engine must keep working: every `controlEvery` calls a fresh control
 * text must give what a pristine engine (no cache, never fed fuzz) gives. Used by
 * scripts/fuzz-fill (long runs) and tests/reliability/fuzz-fill.test.ts (a short run).
 *
 * Plain ESM with JSDoc types: scripts/fuzz-fill runs it in Node without a TypeScript step.
 */
import { describeInput, randomFillCall, resultViolations, mulberry32 } from './fill-inputs.mjs';

/**
 * @typedef {object} FuzzFillReport
 * @property {number} seed
 * @property {number} calls
 * @property {number} resolved
 * @property {number} masks
 * @property {Record<string, number>} errors rejections by error code
 * @property {number} controls
 * @property {Array<{ input: string, options: unknown, problem: string }>} failures
 * @property {number} seconds
 * @property {Record<string, number>} [cache] the engine's cache stats at the end
 */

const KNOWN_CODES = new Set(['EMPTY_INPUT', 'NO_MASK', 'TOO_LONG', 'BAD_OPTION']);
const CONTROL_CHARS = '春眠不觉晓处闻啼鸟夜来风雨声花落知多少白日依山尽黄河入海流';

/**
 * Runs until `calls` calls or `seconds` seconds, whichever comes first. Returns counts and the
 * failures (at most `maxFailures` kept, each with a reproducible description of its input).
 * `api` is the package entry ({ createFillMask, TiankongError }).
 * @param {{ api: any, model: string, seed?: number, calls?: number, seconds?: number, controlEvery?: number,
 *   cache?: { maxEntries: number, maxBytes: number }, maxFailures?: number, onProgress?: (report: FuzzFillReport) => void }} options
 * @returns {Promise<FuzzFillReport>}
 */
export async function fuzzFill({
  api,
  model,
  seed = 1,
  calls = Infinity,
  seconds = Infinity,
  controlEvery = 25,
  cache = { maxEntries: 64, maxBytes: 256 << 10 },
  maxFailures = 20,
  onProgress = () => {},
}) {
  const { createFillMask, TiankongError } = api;
  const tk = await createFillMask({ model, backend: 'wasm', cache });
  const pristine = await createFillMask({ model, backend: 'wasm', cache: { maxEntries: 0 } });
  const random = mulberry32(seed);
  const controlRandom = mulberry32(seed ^ 0x5eed);
  /** @type {FuzzFillReport} */
  const report = { seed, calls: 0, resolved: 0, masks: 0, errors: {}, controls: 0, failures: [], seconds: 0 };
  /** @param {unknown} input @param {unknown} options @param {string} problem */
  const fail = (input, options, problem) => {
    if (report.failures.length < maxFailures) report.failures.push({ input: describeInput(input), options, problem });
  };
  const started = performance.now();
  try {
    while (report.calls < calls && (performance.now() - started) / 1000 < seconds) {
      const { text, options } = randomFillCall(random);
      report.calls++;
      try {
        const result = await tk.fill(text, options);
        report.resolved++;
        report.masks += result.masks.length;
        for (const problem of resultViolations(/** @type {string} */ (text), result, options))
          fail(text, options, problem);
      } catch (thrown) {
        const error = /** @type {any} */ (thrown);
        if (!(error instanceof TiankongError))
          fail(text, options, `threw a non-TiankongError: ${error?.stack ?? error}`);
        else if (!KNOWN_CODES.has(error.code) || !error.message.startsWith('tiankong: '))
          fail(text, options, `${error.code}: ${error.message}`);
        else report.errors[error.code] = (report.errors[error.code] ?? 0) + 1;
      }
      if (report.calls % controlEvery === 0) {
        report.controls++;
        const control = `${CONTROL_CHARS[Math.floor(controlRandom() * CONTROL_CHARS.length)]}${CONTROL_CHARS[Math.floor(controlRandom() * CONTROL_CHARS.length)]}[MASK]。`;
        const [ours, clean] = await Promise.all([tk.fill(control, { topK: 3 }), pristine.fill(control, { topK: 3 })]);
        if (JSON.stringify(ours.masks) !== JSON.stringify(clean.masks))
          fail(control, { topK: 3 }, 'control text differs from a pristine engine: state corrupted');
        onProgress(report);
      }
    }
    const { cache: stats } = tk.stats();
    report.cache = stats;
    if (stats.entries > stats.maxEntries || stats.bytes > stats.maxBytes)
      fail('', {}, `cache over its bounds: ${JSON.stringify(stats)}`);
    // One cache lookup per resolved call and per control; rejected calls never reach the cache.
    if (stats.hits + stats.misses !== report.resolved + report.controls)
      fail('', {}, `cache counted ${stats.hits + stats.misses} lookups for ${report.resolved + report.controls} fills`);
  } finally {
    report.seconds = Math.round((performance.now() - started) / 10) / 100;
    await tk.dispose();
    await pristine.dispose();
  }
  return report;
}
