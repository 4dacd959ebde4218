// @ts-check
/**
 * Soak runs: many fills with a realistic mix (fill-inputs.mjs soakCall: cache hits and misses,
 * rejected calls, hostile texts) through one engine, sampling memory as it goes, so growth that
 * a single test never shows (leaked wasm objects, an unbounded cache or map) becomes visible.
 * Used by scripts/soak (10 000 Node / 2 000 Chromium fills) and tests/reliability/soak.test.ts
 * (a short run with loose plateau bounds). No timing is asserted anywhere; fills/s is reported.
 *
 * Memory is read through the DevTools protocol, after a full GC: the JS heap in use
 * (Runtime.getHeapUsage) and, in Node, the size of every live WebAssembly.Memory
 * (Runtime.queryObjects on its prototype) — the C++ core's heap and ONNX Runtime's heap, which
 * neither library exposes. Node: in-process (node:inspector), with the engine assembled from
 * dist/'s own modules (the steps createFillMask takes). Chromium: the browser entry on a
 * cross-origin-isolated page; JS heaps of the page and of the Worker (worker.js) target, and
 * the renderer process's RSS (Linux /proc), which holds the Worker's wasm memories:
 * Runtime.queryObjects never answers in a dedicated worker (Chromium 156), and
 * performance.measureUserAgentSpecificMemory() takes ~60 s per sample.
 *
 * Plain ESM with JSDoc types: scripts/soak runs it in Node without a TypeScript step.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mulberry32, soakCall } from './fill-inputs.mjs';

/**
 * @typedef {object} SoakSummary
 * @property {number} start
 * @property {number} middle
 * @property {number} end
 * @property {number | null} growthPercent end vs start, in %
 * @property {number | null} secondHalfGrowthPercent end vs middle, in %
 */
/** @typedef {Record<'repeat' | 'fresh' | 'error' | 'hostile' | 'resolved' | 'rejected' | 'unexpected', number>} SoakCounts */
/** @typedef {{ fills: number } & Record<string, number>} SoakSample */
/**
 * @typedef {object} SoakRun
 * @property {number} fills
 * @property {number} seconds
 * @property {number} fillsPerSecond
 * @property {SoakCounts} counts
 * @property {string[]} unexpected messages of the first calls that failed with something else than a TiankongError
 * @property {SoakSample[]} samples
 * @property {Record<string, SoakSummary | undefined>} summary per measured field
 * @property {{ hits: number, misses: number, evictions: number, entries: number, bytes: number, maxEntries: number, maxBytes: number }} cache
 * @property {number} threads
 */
/** @typedef {{ maxEntries: number, maxBytes: number }} CacheBounds */
/** @typedef {(method: string, params?: object) => Promise<any>} Send a DevTools protocol call */
/** @typedef {{ ok: true } | { ok: false, tiankong: boolean, message: string }} Outcome */

/**
 * JS heap in use after a full GC, and every live WebAssembly.Memory ({ bytes, shared }), in the
 * context `send` talks to (a DevTools protocol session). ONNX Runtime Web ships only threaded
 * builds, so its memory is shared; the core's single-threaded build has a plain one.
 * @param {Send} send
 * @param {{ wasm?: boolean }} [options]
 * @returns {Promise<{ jsHeapUsedBytes: number, wasmMemories: Array<{ bytes: number, shared: boolean }> }>}
 */
async function measureContext(send, { wasm = true } = {}) {
  await send('HeapProfiler.collectGarbage');
  const { usedSize } = await send('Runtime.getHeapUsage');
  if (!wasm) return { jsHeapUsedBytes: usedSize, wasmMemories: [] };
  const group = { objectGroup: 'tiankong-soak' };
  const { result: prototype } = await send('Runtime.evaluate', {
    expression: 'WebAssembly.Memory.prototype',
    ...group,
  });
  const { objects } = await send('Runtime.queryObjects', { prototypeObjectId: prototype.objectId, ...group });
  const { result } = await send('Runtime.callFunctionOn', {
    objectId: objects.objectId,
    returnByValue: true,
    functionDeclaration:
      'function () { return this.map((m) => ({ bytes: m.buffer.byteLength, shared: m.buffer instanceof SharedArrayBuffer })); }',
  });
  await send('Runtime.releaseObjectGroup', group);
  return { jsHeapUsedBytes: usedSize, wasmMemories: result.value };
}

/** @param {Array<{ bytes: number }>} memories */
const sumBytes = (memories) => memories.reduce((sum, m) => sum + m.bytes, 0);

/** @returns {SoakCounts} */
const noCounts = () => ({ repeat: 0, fresh: 0, error: 0, hostile: 0, resolved: 0, rejected: 0, unexpected: 0 });

/**
 * Runs `total` soak calls through `fill`, sampling `samples`+1 times; returns the per-phase record.
 * @param {{ total: number, samples: number, seed: number, fill: (text: string, options: object) => Promise<Outcome>,
 *   sample: () => Promise<Record<string, number>> }} options
 */
async function drive({ total, samples, seed, fill, sample }) {
  const random = mulberry32(seed);
  const counts = noCounts();
  /** @type {string[]} */
  const unexpected = [];
  /** @type {SoakSample[]} */
  const points = [{ fills: 0, ...(await sample()) }];
  const started = performance.now();
  for (let i = 1; i <= total; i++) {
    const call = soakCall(random);
    counts[call.kind]++;
    const outcome = await fill(call.text, call.options);
    if (outcome.ok) counts.resolved++;
    else if (outcome.tiankong) counts.rejected++;
    else {
      counts.unexpected++;
      if (unexpected.length < 10) unexpected.push(outcome.message);
    }
    if (i % Math.max(1, Math.floor(total / samples)) === 0 || i === total) {
      if (points[points.length - 1].fills !== i) points.push({ fills: i, ...(await sample()) });
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    fills: total,
    seconds: Math.round(seconds * 10) / 10,
    fillsPerSecond: Math.round((total / seconds) * 10) / 10,
    counts,
    unexpected,
    samples: points,
  };
}

/**
 * start / middle / end of each numeric field, and end-vs-start and end-vs-middle growth in %.
 * @param {SoakSample[]} points
 * @returns {Record<string, SoakSummary>}
 */
export function summarize(points) {
  const middle = points[Math.floor((points.length - 1) / 2)];
  const [start, end] = [points[0], points[points.length - 1]];
  /** @param {number} a @param {number} b */
  const pct = (a, b) => (a > 0 ? Math.round(((b - a) / a) * 1000) / 10 : null);
  /** @type {Record<string, SoakSummary>} */
  const summary = {};
  for (const [field, value] of Object.entries(end)) {
    if (typeof value !== 'number' || field === 'fills') continue;
    summary[field] = {
      start: start[field],
      middle: middle[field],
      end: value,
      growthPercent: pct(start[field], value),
      secondHalfGrowthPercent: pct(middle[field], value),
    };
  }
  return summary;
}

/**
 * Node soak through the built package in dist/. `warmup` fills run before the first sample (the
 * first model runs allocate ORT's arenas).
 * @param {{ distDir: string, model: string, fills: number, samples?: number, seed?: number, warmup?: number, cache?: CacheBounds }} options
 * @returns {Promise<SoakRun>}
 */
export async function soakNode({
  distDir,
  model,
  fills,
  samples = 10,
  seed = 7,
  warmup = 50,
  cache = { maxEntries: 500, maxBytes: 1 << 20 },
}) {
  /** @param {string} file @returns {Promise<any>} */
  const load = (file) => import(pathToFileURL(join(distDir, file)).href);
  // node.js openNodeEngine: the steps createFillMask takes, returning the core too (its heap is sampled).
  const [{ openNodeEngine }, { TiankongError }] = await Promise.all([load('node.js'), load('errors.js')]);
  const { engine, core } = await openNodeEngine({ model, backend: 'wasm', cache });
  /** @type {(text: string, options: object) => Promise<Outcome>} */
  const fill = (text, options) =>
    engine.fill(text, options).then(
      () => ({ ok: true }),
      (/** @type {any} */ error) => ({
        ok: false,
        tiankong: error instanceof TiankongError,
        message: String(error?.stack ?? error),
      }),
    );
  const inspector = new Session();
  inspector.connect();
  /** @type {Send} */
  const send = (method, params = {}) =>
    new Promise((resolve, reject) =>
      inspector.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  const sample = async () => {
    const { jsHeapUsedBytes, wasmMemories } = await measureContext(send);
    const coreWasmHeapBytes = core.module.HEAP8.byteLength;
    const { cache: c } = engine.stats();
    return {
      rssBytes: process.memoryUsage().rss,
      jsHeapUsedBytes,
      coreWasmHeapBytes,
      ortWasmHeapBytes: sumBytes(wasmMemories.filter((m) => m.shared)),
      cacheEntries: c.entries,
      cacheBytes: c.bytes,
    };
  };
  try {
    const warm = mulberry32(seed + 1);
    for (let i = 0; i < warmup; i++) {
      const call = soakCall(warm);
      await fill(call.text, call.options);
    }
    const run = await drive({ total: fills, samples, seed, fill, sample });
    return { ...run, summary: summarize(run.samples), cache: engine.stats().cache, threads: engine.stats().threads };
  } finally {
    inspector.disconnect();
    await engine.dispose();
  }
}

/**
 * Chromium soak: `page` must be on the reliability origin (package-origin.mjs), cross-origin
 * isolated; `userDataDir` (the profile it was launched with) finds its renderer process. The
 * fills run inside the page in `samples` batches; memory is measured between them.
 * @param {{ page: import('playwright-core').Page, userDataDir?: string, fills: number, samples?: number, seed?: number,
 *   warmup?: number, cache?: CacheBounds, modelUrl?: string }} options
 * @returns {Promise<SoakRun>}
 */
export async function soakBrowser({
  page,
  userDataDir,
  fills,
  samples = 10,
  seed = 7,
  warmup = 50,
  cache = { maxEntries: 500, maxBytes: 1 << 20 },
  modelUrl = '/models/soak/',
}) {
  // A string, not a function: a function's import() would be rewritten when a bundler or Vitest loads this file.
  await page.evaluate(`(async () => {
    const api = await import('/dist/browser.js');
    const inputs = await import('/tests/harness/fill-inputs.mjs');
    const tk = await api.createFillMask({ model: ${JSON.stringify(modelUrl)}, cache: ${JSON.stringify(cache)} });
    window.__soak = { tk, inputs, api };
  })()`);
  // One batch of fills inside the page (no round trip per fill); the PRNG state lives in the page.
  /** @param {number} count @param {number} batchSeed */
  const batch = (count, batchSeed) =>
    page.evaluate(
      async ({ count, batchSeed }) => {
        const soak = /** @type {any} */ (window).__soak;
        const { tk, inputs, api } = soak;
        const random = (soak.random ??= inputs.mulberry32(batchSeed));
        /** @type {Record<string, number>} */
        const counts = { repeat: 0, fresh: 0, error: 0, hostile: 0, resolved: 0, rejected: 0, unexpected: 0 };
        /** @type {string[]} */
        const unexpected = [];
        for (let i = 0; i < count; i++) {
          const call = inputs.soakCall(random);
          counts[call.kind]++;
          try {
            await tk.fill(call.text, call.options);
            counts.resolved++;
          } catch (error) {
            if (error instanceof api.TiankongError) counts.rejected++;
            else {
              counts.unexpected++;
              unexpected.push(String(error));
            }
          }
        }
        return { counts, unexpected };
      },
      { count, batchSeed },
    );
  // DevTools sessions: the page, and the runtime's Worker (worker.js) reached through the page's.
  const pageSession = await page.context().newCDPSession(page);
  const { targetInfos } = await pageSession.send('Target.getTargets');
  const workerTarget = targetInfos.find((t) => t.type === 'worker' && new URL(t.url).pathname === '/dist/worker.js');
  if (!workerTarget) throw new Error('soak: the runtime Worker (/dist/worker.js) is not running in the page');
  const { sessionId } = await pageSession.send('Target.attachToTarget', {
    targetId: workerTarget.targetId,
    flatten: false,
  });
  let nextId = 1;
  /** @type {Map<number, (message: any) => void>} */
  const waiting = new Map();
  pageSession.on('Target.receivedMessageFromTarget', (event) => {
    const message = JSON.parse(event.message);
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  /** @type {Send} */
  const sendToWorker = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, (message) =>
        message.error ? reject(new Error(message.error.message)) : resolve(message.result),
      );
      pageSession
        .send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) })
        .catch(reject);
    });
  const sample = async () => {
    const inPage = await measureContext((method, params) => pageSession.send(/** @type {any} */ (method), params), {
      wasm: false,
    });
    const inWorker = await measureContext(sendToWorker, { wasm: false });
    const { cache } = await page.evaluate(() => /** @type {any} */ (window).__soak.tk.stats());
    return {
      ...(userDataDir ? { rendererRssBytes: rendererRssBytes(userDataDir) } : {}),
      pageJsHeapUsedBytes: inPage.jsHeapUsedBytes,
      workerJsHeapUsedBytes: inWorker.jsHeapUsedBytes,
      cacheEntries: cache.entries,
      cacheBytes: cache.bytes,
    };
  };
  const warm = await batch(warmup, seed + 1);
  await page.evaluate(() => {
    delete (/** @type {any} */ (window).__soak.random);
  });
  const counts = noCounts();
  const unexpected = [...warm.unexpected];
  /** @type {SoakSample[]} */
  const points = [{ fills: 0, ...(await sample()) }];
  const started = performance.now();
  const per = Math.ceil(fills / samples);
  for (let done = 0; done < fills;) {
    const count = Math.min(per, fills - done);
    const result = await batch(count, seed);
    done += count;
    for (const [k, v] of Object.entries(result.counts)) counts[/** @type {keyof SoakCounts} */ (k)] += v;
    unexpected.push(...result.unexpected.slice(0, 10 - unexpected.length));
    points.push({ fills: done, ...(await sample()) });
  }
  const seconds = (performance.now() - started) / 1000;
  const stats = await page.evaluate(() => /** @type {any} */ (window).__soak.tk.stats());
  await page.evaluate(() => /** @type {any} */ (window).__soak.tk.dispose());
  return {
    fills,
    seconds: Math.round(seconds * 10) / 10,
    fillsPerSecond: Math.round((fills / seconds) * 10) / 10,
    counts,
    unexpected,
    samples: points,
    summary: summarize(points),
    cache: stats.cache,
    threads: stats.threads,
  };
}

/**
 * RSS of the renderer processes of the Chromium launched with `userDataDir` (Linux /proc): every
 * Chromium child process carries --user-data-dir; renderers have --type=renderer, minus
 * Chromium's own WebUI renderer. The page and its Worker (with their wasm memories) live there.
 * @param {string} userDataDir
 */
function rendererRssBytes(userDataDir) {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/); // Chromium rewrites its argv into one string
      if (
        !args.includes(`--user-data-dir=${userDataDir}`) ||
        !args.includes('--type=renderer') ||
        args.includes('--top-chrome-webui')
      )
        continue;
      total += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}
