// Where the model's time goes, operator by operator: ONNX Runtime's own profiler on the same
// model in onnxruntime-web (the wasm build the browser runs, here in Node) and onnxruntime-node
// (native), same input, same thread count; warm runs only. Explains the wasm/native gap.
//
// usage: node bench/profile-ort.mjs [--seq 34] [--threads 1] [--runs 6] [--warmup 2] [--out FILE] MODEL_DIR
// (MODEL_DIR: an export with model.json, e.g. build/bench/tiankong after scripts/bench.)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSession, runLogits } from '../model/tooling/ort-session.mjs';

function parseArgs(argv) {
  const args = { seq: 34, threads: 1, runs: 6, warmup: 2, out: null, worker: null, model: null };
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) args.model = resolve(argv[i]);
    else if (argv[i].slice(2) in args) args[argv[i].slice(2)] = argv[++i];
    else throw new Error(`unknown option ${argv[i]}`);
  }
  if (!args.model)
    throw new Error('usage: profile-ort.mjs [--seq N] [--threads N] [--runs N] [--warmup N] [--out FILE] MODEL_DIR');
  return {
    ...args,
    seq: Number(args.seq),
    threads: Number(args.threads),
    runs: Number(args.runs),
    warmup: Number(args.warmup),
  };
}

/** [CLS] + ids + [SEP] with one [MASK] in the middle, as the runtime feeds it. */
function feeds(manifest, seq) {
  const { cls, sep, mask } = manifest.special_tokens;
  const ids = Array.from({ length: seq }, (_, i) => 1000 + ((i * 37) % 7000));
  ids[0] = cls;
  ids[seq - 1] = sep;
  const position = Math.floor(seq / 2);
  ids[position] = mask;
  return {
    input_ids: [ids],
    attention_mask: [ids.map(() => 1)],
    token_type_ids: [ids.map(() => 0)],
    mask_positions: [[position]],
  };
}

/** Child process: profile one runtime; events go to a file (native) or stdout (wasm prints them). */
async function worker(args) {
  const manifest = JSON.parse(readFileSync(join(args.model, 'model.json'), 'utf8'));
  const dir = mkdtempSync(join(tmpdir(), 'tiankong-profile-'));
  const extra = {
    enableProfiling: true,
    ...(args.worker === 'node' ? { profileFilePrefix: join(dir, 'profile') } : {}),
  };
  const handle = await createSession(join(args.model, 'model.onnx'), args.worker, args.threads, extra);
  for (let i = 0; i < args.warmup + args.runs; i++) await runLogits(handle, feeds(manifest, args.seq));
  handle.session.endProfiling();
  if (args.worker === 'node') process.stdout.write(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8'));
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write('\n', () => process.exit(0));
}

/** Trace events (a JSON array, or one event per line as the wasm build prints them). */
function parseEvents(text) {
  const events = [];
  for (const line of text.split('\n')) {
    const trimmed = line
      .trim()
      .replace(/^\[/, '')
      .replace(/,?\]?$/, '');
    if (!trimmed.startsWith('{')) continue;
    try {
      events.push(JSON.parse(trimmed));
    } catch {
      /* not an event line */
    }
  }
  return events;
}

/** Mean ms per warm run, by operator type and by node. */
function summarize(events, warmup) {
  const runs = events
    .filter((e) => e.name === 'model_run')
    .sort((a, b) => a.ts - b.ts)
    .slice(warmup);
  const inWarmRun = (e) => runs.some((r) => e.ts >= r.ts && e.ts <= r.ts + r.dur);
  const byOp = {};
  const byNode = {};
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || !inWarmRun(e)) continue;
    byOp[e.args.op_name] = (byOp[e.args.op_name] ?? 0) + e.dur / 1000 / runs.length;
    const node = e.name.replace(/_kernel_time$/, '');
    byNode[node] = (byNode[node] ?? 0) + e.dur / 1000 / runs.length;
  }
  const round = (o) =>
    Object.fromEntries(
      Object.entries(o)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, +v.toFixed(2)]),
    );
  return {
    runs: runs.length,
    run_ms: +(runs.reduce((n, r) => n + r.dur, 0) / 1000 / runs.length).toFixed(1),
    by_op: round(byOp),
    by_node: round(byNode),
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.worker) return worker(args);
  const result = {
    model: args.model,
    seq: args.seq,
    threads: args.threads,
    runs: args.runs,
    date: new Date().toISOString(),
    runtimes: {},
  };
  for (const kind of ['web', 'node']) {
    const child = spawnSync(
      process.execPath,
      [
        fileURLToPath(import.meta.url),
        '--worker',
        kind,
        '--seq',
        String(args.seq),
        '--threads',
        String(args.threads),
        '--runs',
        String(args.runs),
        '--warmup',
        String(args.warmup),
        args.model,
      ],
      { encoding: 'utf8', maxBuffer: 1 << 28 },
    );
    if (child.status !== 0) throw new Error(`profiling ${kind} failed:\n${child.stderr}`);
    result.runtimes[kind] = summarize(parseEvents(child.stdout), args.warmup);
  }
  const { web, node } = result.runtimes;
  console.log(
    `seq ${args.seq}, ${args.threads} thread(s), ${args.runs} warm runs: model run ${web.run_ms} ms wasm, ${node.run_ms} ms native (${(web.run_ms / node.run_ms).toFixed(1)}x)`,
  );
  const row = (name, w, n) =>
    console.log(
      `  ${name.padEnd(64)} ${w.toFixed(1).padStart(8)} ${n.toFixed(1).padStart(8)} ${(w / n).toFixed(1).padStart(6)}x`,
    );
  console.log(`  ${'operator (ms per run)'.padEnd(64)} ${'wasm'.padStart(8)} ${'native'.padStart(8)}`);
  for (const op of Object.keys(web.by_op).slice(0, 8)) row(op, web.by_op[op], node.by_op[op] ?? 0);
  console.log(`  ${'slowest nodes in wasm'.padEnd(64)}`);
  for (const name of Object.keys(web.by_node).slice(0, 5)) row(name, web.by_node[name], node.by_node[name] ?? 0);
  if (args.out) {
    writeFileSync(args.out, JSON.stringify(result, null, 2) + '\n');
    console.log(`wrote ${args.out}`);
  }
}

main().catch((error) => {
  console.error(`profile-ort: ${error.message}`);
  process.exit(1);
});
