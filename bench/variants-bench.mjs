// Many masked variants in one run (issue 25 item 3): the time per variant of
// ModelSession.variants (web/src/engine/session.ts, the built dist/) at batch sizes 1…32, the
// engine path as explain() and the spelling check drive it — the core's input embeddings, one
// session.run over [batch, seq], the core's output layer per variant. Each variant is the text
// with a different character replaced by [MASK], scored at that position. ONNX Runtime Web's wasm
// build in Node (createNodeRuntime, backend 'wasm'; `--backend auto` for onnxruntime-node), one
// child process per thread count (the wasm thread count is process-wide). Every repetition scores
// the same `--variants` variants once per batch size, the sizes in rotated order, so the ratios
// (batch 1 per-variant time / batch B per-variant time, paired within a repetition) compare sizes
// under the same load; the shared machine makes absolute times drift ±20–30%. The batch-size rows
// lift the session's token cap (maxBatchTokens = Infinity); the "default" row is the session as
// the engine uses it (maxBatch and maxBatchTokens at their defaults).
//
// usage: node bench/variants-bench.mjs [--threads 1,2] [--chars 16,40] [--batches 1,2,4,8,16,32]
//          [--variants 32] [--reps 5] [--backend wasm] [--out bench/results/variants.json] [MODEL_DIR]
// MODEL_DIR defaults to model/default. Needs scripts/build-js (dist/) and the core's wasm.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    threads: { type: 'string', default: '1,2' },
    chars: { type: 'string', default: '16,40' },
    batches: { type: 'string', default: '1,2,4,8,16,32' },
    variants: { type: 'string', default: '32' },
    reps: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    backend: { type: 'string', default: 'wasm' },
    out: { type: 'string', default: join(root, 'bench', 'results', 'variants.json') },
    worker: { type: 'string' },
  },
});
const list = (s) => s.split(',').map(Number);
const modelDir = resolve(positionals[0] ?? join(root, 'model', 'default'));

const TEXT =
  '春天来了，公园里的花都开了，孩子们在草地上放风筝，老人们坐在长椅上聊天。' +
  '我们明天早上八点在学校门口集合，然后一起坐车去博物馆参观古代的文物和书画。';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function worker(threads) {
  const dist = (path) => import(pathToFileURL(join(root, 'dist', path)).href);
  const [{ createNodeRuntime, loadModelDirectory }, { loadEngineCore }, { ModelSession }] = await Promise.all([
    dist('node.js'),
    dist('core/engine-core.js'),
    dist('engine/session.js'),
  ]);
  const runtime = await createNodeRuntime({ backend: values.backend, threads });
  const model = await loadModelDirectory(modelDir, { memory: false });
  const core = await loadEngineCore();
  const session = await ModelSession.create(runtime, model, core.module);
  const { manifest } = model;
  const vocab = new TextDecoder().decode(model.vocabBytes).split('\n');
  const idOf = new Map(vocab.map((token, id) => [token, id]));
  const { cls, sep, mask, unk } = manifest.special_tokens;
  const rows = [];
  const count = Number(values.variants);
  const defaults = { maxBatch: session.maxBatch, maxBatchTokens: session.maxBatchTokens };
  for (const chars of list(values.chars)) {
    const ids = Int32Array.from([cls, ...[...TEXT.slice(0, chars)].map((c) => idOf.get(c) ?? unk), sep]);
    // Variant k: character 1 + (k mod chars) masked and scored.
    const variants = Array.from({ length: count }, (_, k) => {
      const at = 1 + (k % chars);
      const copy = ids.slice();
      copy[at] = mask;
      return { ids: copy, positions: Int32Array.of(at) };
    });
    const batches = [...list(values.batches), 'default'];
    const perVariant = new Map(batches.map((b) => [b, []]));
    const perRun = (b) =>
      b === 'default' ? Math.max(1, Math.min(defaults.maxBatch, Math.floor(defaults.maxBatchTokens / ids.length))) : b;
    const reps = Number(values.reps);
    const warmup = Number(values.warmup);
    for (let rep = 0; rep < warmup + reps; rep++) {
      for (let k = 0; k < batches.length; k++) {
        const b = batches[(k + rep) % batches.length];
        session.maxBatch = b === 'default' ? defaults.maxBatch : b;
        session.maxBatchTokens = b === 'default' ? defaults.maxBatchTokens : Infinity;
        const runs = session.runs;
        const started = performance.now();
        await session.variants(variants);
        const ms = performance.now() - started;
        if (session.runs - runs !== Math.ceil(count / perRun(b))) {
          throw new Error(`batch ${b}: ${session.runs - runs} runs`);
        }
        if (rep >= warmup) perVariant.get(b).push(ms / count);
      }
    }
    const base = perVariant.get(batches[0]);
    for (const b of batches) {
      const times = perVariant.get(b);
      rows.push({
        threads: runtime.threads,
        chars,
        tokens: chars + 2,
        batch: b === 'default' ? `default (${perRun(b)})` : b,
        tokens_per_run: perRun(b) * ids.length,
        runs_per_rep: Math.ceil(count / perRun(b)),
        ms_per_variant_median: +median(times).toFixed(3),
        ms_per_variant_min: +Math.min(...times).toFixed(3),
        speedup_vs_batch_1: +median(times.map((t, i) => base[i] / t)).toFixed(3),
      });
    }
  }
  await session.release();
  core.dispose();
  process.stdout.write(JSON.stringify({ rows, batchable: session.batchable, backend: runtime.backend, defaults }), () =>
    process.exit(0),
  );
}

async function main() {
  if (values.worker) return worker(Number(values.worker));
  const self = fileURLToPath(import.meta.url);
  const started = performance.now();
  const rows = [];
  let backend = null;
  let defaults = null;
  const args = ['--chars', values.chars, '--batches', values.batches, '--variants', values.variants];
  args.push('--reps', values.reps, '--warmup', values.warmup, '--backend', values.backend, modelDir);
  for (const threads of list(values.threads)) {
    const child = spawnSync(process.execPath, [self, '--worker', String(threads), ...args], {
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    if (child.status !== 0) throw new Error(`${threads} thread(s) failed:\n${child.stderr}`);
    const result = JSON.parse(child.stdout);
    if (!result.batchable) console.warn(`${modelDir}: a dynamic-INT8 model: variants() runs each alone`);
    backend = result.backend;
    defaults = result.defaults;
    rows.push(...result.rows);
  }
  const name = backend === 'wasm' ? 'onnxruntime-web (wasm) in Node' : 'onnxruntime-node';
  console.log(`${relative(root, modelDir) || modelDir}, ${name}: ms per variant (median) and speedup vs batch 1`);
  const batches = [...new Set(rows.map((r) => (String(r.batch).startsWith('default') ? 'default' : r.batch)))];
  console.log(['threads', 'chars', ...batches.map((b) => `batch ${b}`)].join('\t'));
  for (const key of [...new Set(rows.map((r) => `${r.threads}:${r.chars}`))]) {
    const group = rows.filter((r) => `${r.threads}:${r.chars}` === key);
    const cells = group.map(
      (r) =>
        `${r.ms_per_variant_median.toFixed(2)} (${r.speedup_vs_batch_1.toFixed(2)}x` +
        `${String(r.batch).startsWith('default') ? `, ${r.batch.slice(9, -1)}/run` : ''})`,
    );
    console.log([group[0].threads, group[0].chars, ...cells].join('\t'));
  }
  mkdirSync(dirname(resolve(values.out)), { recursive: true });
  const report = {
    benchmark: 'variants (issue 25 item 3)',
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model,
    logical_cpus: cpus().length,
    load_average_at_end: loadavg().map((x) => +x.toFixed(2)),
    model: relative(root, modelDir) || modelDir,
    runtime: name,
    measure:
      'ModelSession.variants wall time / variants (embeddings, session.run, output layer), ' +
      `${values.variants} variants per repetition, each a different character masked and scored; ` +
      `median of ${values.reps} repetitions; speedup = batch 1 time / batch B time, paired per repetition`,
    session_defaults: defaults,
    wall_s: +((performance.now() - started) / 1000).toFixed(1),
    rows,
  };
  writeFileSync(values.out, JSON.stringify(report, null, 2) + '\n');
  console.log(`wrote ${relative(root, values.out)} (${report.wall_s} s)`);
}

main().catch((error) => {
  console.error(`variants-bench: ${error.message}`);
  process.exit(1);
});
