// Latency of exported models in onnxruntime-node and onnxruntime-web (wasm, in Node).
// usage: node bench/model-bench.mjs [--configs node:2,web:1,web:2] [--seqs 16,32,64,128] [--runs N]
//                             [--warmup N] [--masks N] [--out FILE] MODEL_DIR...
// Each runtime/thread configuration runs in its own child process (onnxruntime-web's thread
// count is fixed per process); inside it, models are timed round-robin per sequence length
// so that variants are compared in the same process under the same conditions.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSession, runLogits } from '../model/tooling/ort-session.mjs';

function parseArgs(argv) {
  const args = { configs: 'node:2,web:1,web:2', seqs: '16,32,64,128', runs: 30, warmup: 5, masks: 2, models: [] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag.startsWith('--')) {
      const key = flag.slice(2);
      if (!(key in args) && key !== 'out' && key !== 'worker') throw new Error(`unknown option ${flag}`);
      args[key] = argv[++i];
    } else args.models.push(resolve(flag));
  }
  if (!args.models.length)
    throw new Error(
      'usage: bench-model [--configs node:2,web:1,web:2] [--seqs 16,32,64,128] [--runs N] [--out FILE] MODEL_DIR...',
    );
  return args;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** Builds feeds for one sequence: [CLS] + random CJK-range ids + [SEP], masks spread out. */
function feedsFor(manifest, seq, masks) {
  const { cls, sep, mask } = manifest.special_tokens;
  const vocabSize = manifest.architecture.vocab_size;
  const ids = Array.from({ length: seq }, (_, i) => 200 + ((i * 7919) % Math.max(1, vocabSize - 300)));
  ids[0] = cls;
  ids[seq - 1] = sep;
  const positions = Array.from({ length: masks }, (_, k) => 1 + Math.floor(((k + 1) * (seq - 2)) / (masks + 1)));
  for (const p of positions) ids[p] = mask;
  return {
    input_ids: [ids],
    attention_mask: [ids.map(() => 1)],
    token_type_ids: [ids.map(() => 0)],
    mask_positions: [positions],
  };
}

async function worker(args) {
  const [kind, threadsText] = args.worker.split(':');
  const threads = Number(threadsText);
  const seqs = args.seqs.split(',').map(Number);
  const models = [];
  for (const dir of args.models) {
    const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
    const started = performance.now();
    const handle = await createSession(join(dir, 'model.onnx'), kind, threads);
    await runLogits(handle, feedsFor(manifest, 16, Number(args.masks)));
    models.push({ dir, manifest, handle, loadMs: performance.now() - started, times: {} });
  }
  for (const seq of seqs) {
    for (const m of models) {
      if (seq > m.manifest.max_length) continue;
      const feeds = feedsFor(m.manifest, seq, Number(args.masks));
      for (let i = 0; i < Number(args.warmup); i++) await runLogits(m.handle, feeds);
      m.times[seq] = [];
    }
    for (let r = 0; r < Number(args.runs); r++) {
      for (const m of models) {
        if (!m.times[seq]) continue;
        const feeds = feedsFor(m.manifest, seq, Number(args.masks));
        const t0 = performance.now();
        await runLogits(m.handle, feeds);
        m.times[seq].push(performance.now() - t0);
      }
    }
  }
  const rss = process.memoryUsage().rss;
  const rows = models.map((m) => ({
    model: m.dir,
    name: m.manifest.name,
    bytes: m.manifest.files['model.onnx'].bytes,
    quantization: m.manifest.quantization.op_pattern ?? m.manifest.quantization.scheme,
    logits: m.manifest.logits,
    runtime: kind === 'web' ? 'onnxruntime-web (wasm)' : 'onnxruntime-node',
    threads,
    load_ms: Math.round(m.loadMs),
    latency_ms: Object.fromEntries(
      Object.entries(m.times).map(([seq, t]) => {
        const sorted = [...t].sort((a, b) => a - b);
        return [seq, { median: +percentile(sorted, 0.5).toFixed(2), p95: +percentile(sorted, 0.95).toFixed(2) }];
      }),
    ),
  }));
  process.stdout.write(JSON.stringify({ rows, rss_bytes: rss }), () => process.exit(0));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.worker) return worker(args);
  const self = fileURLToPath(import.meta.url);
  const rows = [];
  for (const config of args.configs.split(',')) {
    const childArgs = [
      self,
      '--worker',
      config,
      '--seqs',
      args.seqs,
      '--runs',
      String(args.runs),
      '--warmup',
      String(args.warmup),
      '--masks',
      String(args.masks),
      ...args.models,
    ];
    const child = spawnSync(process.execPath, childArgs, { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (child.status !== 0) throw new Error(`benchmark ${config} failed:\n${child.stderr}`);
    const result = JSON.parse(child.stdout);
    for (const row of result.rows) rows.push({ ...row, process_rss_mb: Math.round(result.rss_bytes / 2 ** 20) });
  }
  const seqs = args.seqs.split(',');
  console.log(`| model | runtime | threads | load ms | ${seqs.map((s) => `seq ${s} median / p95 ms`).join(' | ')} |`);
  console.log(`|---|---|---|---|${seqs.map(() => '---').join('|')}|`);
  for (const r of rows) {
    const cells = seqs.map((s) => (r.latency_ms[s] ? `${r.latency_ms[s].median} / ${r.latency_ms[s].p95}` : '–'));
    console.log(
      `| ${basename(r.model)} (${r.quantization}, ${r.logits}) | ${r.runtime} | ${r.threads} | ${r.load_ms} | ${cells.join(' | ')} |`,
    );
  }
  if (args.out) {
    mkdirSync(dirname(resolve(args.out)), { recursive: true });
    const report = {
      benchmark: 'model-latency',
      date: new Date().toISOString(),
      node: process.version,
      cpu: cpus()[0]?.model,
      cores: cpus().length,
      load_average_at_end: loadavg(),
      batch: 1,
      masks: Number(args.masks),
      runs: Number(args.runs),
      warmup: Number(args.warmup),
      rows,
    };
    writeFileSync(args.out, JSON.stringify(report, null, 2) + '\n');
    console.log(`wrote ${args.out}`);
  }
}

main().catch((err) => {
  console.error(`bench-model: ${err.message}`);
  process.exit(1);
});
