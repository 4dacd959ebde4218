// The in-page half of the benchmark (bench/run.mjs drives it over page.evaluate). Both
// contenders run in a dedicated Worker: tiankong through its browser entry (dist/browser.js
// starts dist/worker.js), transformers.js in tjs-worker.js. Every time is taken here, in the
// page, around the same kind of Worker round trip, so the two are measured alike.
import { createFillMask } from '/dist/browser.js';

const TOP_K = 5;
const contenders = {};

/** tiankong: the package's own browser API, on the model directory served at `model`. */
async function loadTiankong(threads, model, resultCache = true) {
  const tk = await createFillMask({
    model,
    backend: 'wasm',
    threads,
    ...(resultCache ? {} : { cache: { maxEntries: 0, maxBytes: 0 } }),
  });
  return {
    info: { threads: tk.stats().threads, threadsReason: tk.stats().threadsReason },
    async fill(text) {
      const result = await tk.fill(text, { topK: TOP_K });
      const { inferenceMs, totalMs } = result.timings;
      return {
        filled: result.masks.length,
        top1: result.masks[0].candidates[0].token,
        cached: result.cached,
        inferenceMs,
        totalMs,
      };
    },
    /** Spelling check; `lagMs` is the page's longest timer delay meanwhile (the check runs in the Worker). */
    async check(text) {
      let lagMs = 0;
      let expected = performance.now() + 4;
      const probe = setInterval(() => {
        const now = performance.now();
        lagMs = Math.max(lagMs, now - expected);
        expected = now + 4;
      }, 4);
      try {
        const result = await tk.check(text);
        const { inferenceMs, totalMs, runs } = result.timings;
        return {
          flagged: result.corrections.length,
          checked: result.checked,
          cached: result.cached,
          inferenceMs,
          totalMs,
          runs,
          lagMs,
        };
      } finally {
        clearInterval(probe);
      }
    },
    dispose: () => tk.dispose(),
  };
}

/** transformers.js: pipeline('fill-mask') in its Worker. */
async function loadTransformers(threads) {
  const worker = new Worker('/bench/tjs-worker.js', { type: 'module' });
  const pending = new Map();
  let nextId = 1;
  worker.onmessage = ({ data }) => {
    const { resolve, reject } = pending.get(data.id);
    pending.delete(data.id);
    if ('error' in data) reject(new Error(`transformers.js: ${data.error}`));
    else resolve(data.value);
  };
  const call = (message) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...message, id });
    });
  const info = await call({ type: 'load', threads });
  return {
    info,
    async fill(text) {
      return { ...(await call({ type: 'fill', text, topK: TOP_K })), cached: false };
    },
    async dispose() {
      await call({ type: 'dispose' });
      worker.terminate();
    },
  };
}

window.bench = {
  isolated: crossOriginIsolated,

  /**
   * Cold start: model download + session + first prediction, Cache Storage cleared first unless
   * `keepCache` (then tiankong reads its model from Cache Storage, as on a second visit).
   * `name` is 'transformers' or a name for a tiankong model at `model` (default /models/tiankong/).
   */
  async load(name, threads, firstText, { model = '/models/tiankong/', keepCache = false, resultCache = true } = {}) {
    if (!keepCache) for (const key of await caches.keys()) await caches.delete(key);
    const started = performance.now();
    const contender = await (name === 'transformers'
      ? loadTransformers(threads)
      : loadTiankong(threads, model, resultCache));
    const loadMs = performance.now() - started;
    const first = await contender.fill(firstText);
    contenders[name] = contender;
    return { ...contender.info, loadMs, coldMs: performance.now() - started, first };
  },

  /** One prediction, timed around the Worker round trip. */
  async fill(name, text) {
    const started = performance.now();
    const result = await contenders[name].fill(text);
    return { ms: performance.now() - started, ...result };
  },

  /** One spelling check (tiankong only), timed around the Worker round trip. */
  async check(name, text) {
    const started = performance.now();
    const result = await contenders[name].check(text);
    return { ms: performance.now() - started, ...result };
  },

  async dispose(name) {
    await contenders[name]?.dispose();
    delete contenders[name];
  },

  /** Bytes the page (with its Workers and their wasm memories) holds, as Chromium measures them. */
  async memory() {
    const measured = await performance.measureUserAgentSpecificMemory();
    return measured.bytes;
  },

  /**
   * Tokenizer throughput on `lines`, one text per call as an app does: tiankong's wasm
   * tokenizer vs transformers.js's, alternating passes, best pass of each (MB/s of UTF-8 per
   * wall second). Also returns the total token counts (must agree: same vocab, same rules).
   */
  async tokenizers(lines, rounds) {
    const { loadCore } = await import('/dist/core/load-core.js');
    const { env, AutoTokenizer } = await import('/tjs/transformers.min.js');
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = '/models/tjs/';
    const core = await loadCore({ variant: 'single' });
    const vocab = new Uint8Array(await (await fetch('/models/tiankong/vocab.txt')).arrayBuffer());
    const manifest = await (await fetch('/models/tiankong/model.json')).json();
    const t = manifest.tokenizer;
    const wasm = new core.module.Tokenizer(vocab, {
      cleanText: t.clean_text,
      handleChineseChars: t.handle_chinese_chars,
      stripAccents: t.strip_accents,
      lowercase: t.lowercase,
      maxInputCharsPerWord: 100,
      maxLength: 1 << 30,
    });
    const tjs = await AutoTokenizer.from_pretrained('bert-bench');
    const bytes = lines.reduce((n, l) => n + new TextEncoder().encode(l).length, 0);
    const encoders = {
      tiankong: (line) => wasm.encode(line).ids.length,
      transformers: (line) => tjs.encode(line).length,
    };
    const best = { tiankong: Infinity, transformers: Infinity };
    const tokens = {};
    for (let round = 0; round < rounds; round++) {
      for (const [name, encode] of Object.entries(encoders)) {
        const started = performance.now();
        let count = 0;
        for (const line of lines) count += encode(line);
        best[name] = Math.min(best[name], (performance.now() - started) / 1000);
        tokens[name] = count;
      }
    }
    wasm.delete();
    core.dispose();
    return Object.fromEntries(
      Object.keys(encoders).map((name) => [
        name,
        { mb_per_s: bytes / 1e6 / best[name], seconds: best[name], tokens: tokens[name], bytes, lines: lines.length },
      ]),
    );
  },
};
window.dispatchEvent(new Event('bench-ready'));
