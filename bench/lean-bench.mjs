// Graph forms side by side (issue 25): the same model exported as the torch graph and as the
// lean graph (scripts/export-model --lean), run in onnxruntime-web's wasm build in Node (and
// optionally onnxruntime-node), one child process per runtime and thread count (onnxruntime-web's
// thread count is process-wide), every model loaded in that process and the calls interleaved
// (order rotated every run), so the ratios compare variants under the same conditions; wasm
// timings drift ±20–30% between processes, far less within one. Times are session.run only (the
// core graph's input embeddings and output layer are the C++ core's, the same for every graph).
//
// usage: node bench/lean-bench.mjs [--threads 1,2] [--chars 16,32] [--masks 1] [--runs 60]
//          [--warmup 8] [--runtimes web] [--out FILE] NAME=MODEL_DIR NAME=MODEL_DIR...
// The first model is the baseline: every other row reports baseline p50 / its p50.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSession } from '../model/tooling/ort-session.mjs';

function parseArgs(argv) {
  const args = {
    threads: '1,2',
    chars: '16',
    masks: '1',
    runs: 60,
    warmup: 8,
    runtimes: 'web',
    out: null,
    worker: null,
  };
  const models = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('--')) {
      const key = argv[i].slice(2);
      if (!(key in args) || i + 1 >= argv.length) throw new Error(`unknown or incomplete option ${argv[i]}`);
      args[key] = argv[++i];
    } else {
      const [name, dir] = argv[i].includes('=') ? argv[i].split('=') : [argv[i], argv[i]];
      models.push({ name, dir: resolve(dir) });
    }
  }
  if (models.length < 1) throw new Error('usage: lean-bench.mjs [options] NAME=MODEL_DIR...');
  const list = (s) => String(s).split(',');
  return {
    ...args,
    models,
    threads: list(args.threads).map(Number),
    chars: list(args.chars).map(Number),
    masks: list(args.masks).map(Number),
    runtimes: list(args.runtimes),
    runs: Number(args.runs),
    warmup: Number(args.warmup),
  };
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
function summarize(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: +percentile(sorted, 0.5).toFixed(3), p95: +percentile(sorted, 0.95).toFixed(3), runs: times.length };
}

/** Seeded pseudo-random floats in [-scale, scale) (xorshift32), for inputs_embeds. */
function noise(n, seed, scale) {
  const out = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = ((s >>> 0) / 2 ** 32 - 0.5) * 2 * scale;
  }
  return out;
}

/** Feeds for one call: [CLS] + `chars` + [SEP], `masks` spread out, a different input per run. */
function feedsFor(ort, session, manifest, chars, masks, run) {
  const seq = chars + 2;
  const { cls, sep, mask } = manifest.special_tokens;
  const ids = Array.from(
    { length: seq },
    (_, i) => 200 + ((i * 7919 + run * 104729) % (manifest.architecture.vocab_size - 300)),
  );
  ids[0] = cls;
  ids[seq - 1] = sep;
  const positions = Array.from({ length: masks }, (_, k) => 1 + Math.floor(((k + 1) * chars) / (masks + 1)));
  for (const p of positions) ids[p] = mask;
  const int64 = (rows) =>
    new ort.Tensor('int64', BigInt64Array.from(rows.flat(), BigInt), [rows.length, rows[0].length]);
  const all = {
    input_ids: () => int64([ids]),
    attention_mask: () => int64([ids.map(() => 1)]),
    token_type_ids: () => int64([ids.map(() => 0)]),
    mask_positions: () => int64([positions]),
    inputs_embeds: () =>
      new ort.Tensor('float32', noise(seq * manifest.architecture.hidden_size, run + 1, 0.05), [
        1,
        seq,
        manifest.architecture.hidden_size,
      ]),
  };
  return Object.fromEntries(session.inputNames.map((name) => [name, all[name]()]));
}

async function worker(args) {
  const [runtime, threadsText] = args.worker.split(':');
  const threads = Number(threadsText);
  const loaded = [];
  for (const { name, dir } of args.models) {
    const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
    const started = performance.now();
    const handle = await createSession(join(dir, 'model.onnx'), runtime, threads);
    loaded.push({ name, manifest, handle, load_ms: Math.round(performance.now() - started) });
  }
  const rows = [];
  for (const chars of args.chars) {
    for (const masks of args.masks) {
      const times = loaded.map(() => []);
      for (let i = 0; i < args.warmup + args.runs; i++) {
        for (let k = 0; k < loaded.length; k++) {
          const index = (k + i) % loaded.length;
          const { handle, manifest } = loaded[index];
          const feeds = feedsFor(handle.ort, handle.session, manifest, chars, masks, i);
          const t0 = performance.now();
          await handle.session.run(feeds);
          if (i >= args.warmup) times[index].push(performance.now() - t0);
        }
      }
      const models = Object.fromEntries(loaded.map((m, k) => [m.name, summarize(times[k])]));
      const base = models[loaded[0].name].p50;
      const ratios = Object.fromEntries(loaded.slice(1).map((m) => [m.name, +(base / models[m.name].p50).toFixed(3)]));
      rows.push({ runtime, threads, chars, tokens: chars + 2, masks, models, speedup_vs_first: ratios });
    }
  }
  const load = Object.fromEntries(loaded.map((m) => [m.name, m.load_ms]));
  process.stdout.write(JSON.stringify({ rows, load_ms: load }), () => process.exit(0));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.worker) return worker(args);
  const self = fileURLToPath(import.meta.url);
  const rows = [];
  const loadMs = {};
  const runtimeName = { web: 'onnxruntime-web (wasm, in Node)', node: 'onnxruntime-node' };
  for (const runtime of args.runtimes) {
    for (const threads of args.threads) {
      const child = spawnSync(
        process.execPath,
        [
          self,
          '--worker',
          `${runtime}:${threads}`,
          ...['--chars', args.chars.join(','), '--masks', args.masks.join(','), '--runs', String(args.runs)],
          ...['--warmup', String(args.warmup)],
          ...args.models.map((m) => `${m.name}=${m.dir}`),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 26 },
      );
      if (child.status !== 0) throw new Error(`${runtime}:${threads} failed:\n${child.stderr}`);
      const result = JSON.parse(child.stdout);
      loadMs[`${runtime}:${threads}`] = result.load_ms;
      for (const row of result.rows) {
        rows.push(row);
        const cells = Object.entries(row.models).map(([n, s]) => `${n} ${s.p50.toFixed(2)}/${s.p95.toFixed(2)}`);
        const ratios = Object.entries(row.speedup_vs_first).map(([n, r]) => `${n} ${r.toFixed(2)}x`);
        console.log(
          `${runtimeName[runtime]}, ${threads} thread${threads > 1 ? 's' : ''}, ${row.chars} chars, ${row.masks} mask${row.masks > 1 ? 's' : ''} | ` +
            `p50/p95 ms: ${cells.join(', ')} | vs ${args.models[0].name}: ${ratios.join(', ')}`,
        );
      }
    }
  }
  if (args.out) {
    mkdirSync(dirname(resolve(args.out)), { recursive: true });
    const report = {
      benchmark: 'lean-graph',
      date: new Date().toISOString(),
      node: process.version,
      cpu: cpus()[0]?.model,
      logical_cpus: cpus().length,
      load_average_at_end: loadavg().map((x) => +x.toFixed(2)),
      measure: 'session.run wall time, batch 1, calls interleaved per run',
      models: Object.fromEntries(
        args.models.map((m) => [m.name, m.dir.replace(resolve(dirname(self), '..') + '/', '')]),
      ),
      runs: args.runs,
      warmup: args.warmup,
      load_ms: loadMs,
      rows,
    };
    writeFileSync(args.out, JSON.stringify(report, null, 2) + '\n');
    console.log(`wrote ${args.out}`);
  }
}

main().catch((error) => {
  console.error(`lean-bench: ${error.message}`);
  process.exit(1);
});
