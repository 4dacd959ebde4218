// Where the model's time goes, operator by operator: ONNX Runtime's own profiler on the same
// model in onnxruntime-web (the wasm build the browser runs, here in Node) and onnxruntime-node
// (native), same input, same thread count; warm runs only. Explains the wasm/native gap.
// Beside the kernel times, the graph each runtime runs: the operator counts of the graph as
// exported, of ONNX Runtime's optimized graph (level "all", dumped by onnxruntime-node through
// the session option optimizedModelFilePath; onnxruntime-web cannot write it: its wasm file
// system is in memory and the option crashes it in Node), and of the nodes each runtime's
// profile shows running (the wasm build's own optimized graph, counted from its kernels).
//
// usage: node bench/profile-ort.mjs [--seq 34] [--threads 1] [--runs 6] [--warmup 2] [--out FILE] MODEL_DIR...
// (MODEL_DIR: an export with model.json, e.g. build/bench/tiankong (core graph: inputs_embeds
// in) or build/bench/transformers-js after scripts/bench. With several, one JSON holds them all.)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSession, runLogits } from '../model/tooling/ort-session.mjs';

function parseArgs(argv) {
  const args = { seq: 34, threads: 1, runs: 6, warmup: 2, out: null, worker: null, models: [] };
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) args.models.push(resolve(argv[i]));
    else if (argv[i].slice(2) in args && argv[i] !== '--models') args[argv[i].slice(2)] = argv[++i];
    else throw new Error(`unknown option ${argv[i]}`);
  }
  if (!args.models.length)
    throw new Error('usage: profile-ort.mjs [--seq N] [--threads N] [--runs N] [--warmup N] [--out FILE] MODEL_DIR...');
  return {
    ...args,
    seq: Number(args.seq),
    threads: Number(args.threads),
    runs: Number(args.runs),
    warmup: Number(args.warmup),
  };
}

/**
 * [CLS] + ids + [SEP] with one [MASK] in the middle, as the runtime feeds it; for a core graph
 * (inputs_embeds in) small deterministic embedding rows instead of ids (the C++ core's gather of
 * head.bin is not part of the graph, and kernel times do not depend on the values).
 */
function feeds(manifest, seq) {
  const { cls, sep, mask } = manifest.special_tokens;
  const ids = Array.from(
    { length: seq },
    (_, i) => 1000 + ((i * 37) % Math.min(7000, manifest.architecture.vocab_size - 1000)),
  );
  ids[0] = cls;
  ids[seq - 1] = sep;
  const position = Math.floor(seq / 2);
  ids[position] = mask;
  const hidden = manifest.architecture.hidden_size;
  return {
    input_ids: [ids],
    inputs_embeds: [
      ids.map((id) => Array.from({ length: hidden }, (_, j) => (((id * 131 + j * 17) % 101) - 50) / 1000)),
    ],
    attention_mask: [ids.map(() => 1)],
    token_type_ids: [ids.map(() => 0)],
    mask_positions: [[position]],
  };
}

/**
 * Operator counts ("Op", or "domain:Op" outside the default domain) of a serialized ModelProto,
 * from a minimal protobuf walk: ModelProto.graph (field 7) → GraphProto.node (field 1) →
 * NodeProto.op_type (field 4) and domain (field 7); everything else is skipped by its length.
 */
export function graphOpCounts(bytes) {
  const varint = (state) => {
    let value = 0;
    let shift = 1;
    for (;;) {
      const byte = bytes[state.at++];
      value += (byte & 0x7f) * shift;
      if (byte < 0x80) return value;
      shift *= 128;
    }
  };
  /** Calls visit(field, start, end) for every length-delimited field in [start, end). */
  const fields = (start, end, visit) => {
    const state = { at: start };
    while (state.at < end) {
      const key = varint(state);
      const wire = key % 8;
      const field = Math.floor(key / 8);
      if (wire === 0) varint(state);
      else if (wire === 1) state.at += 8;
      else if (wire === 5) state.at += 4;
      else if (wire === 2) {
        const length = varint(state);
        visit(field, state.at, state.at + length);
        state.at += length;
      } else throw new Error(`unexpected protobuf wire type ${wire}`);
    }
  };
  const text = (start, end) => Buffer.from(bytes.subarray(start, end)).toString('utf8');
  const counts = {};
  fields(0, bytes.length, (field, start, end) => {
    if (field !== 7) return;
    fields(start, end, (graphField, nodeStart, nodeEnd) => {
      if (graphField !== 1) return;
      let op = '';
      let domain = '';
      fields(nodeStart, nodeEnd, (f, s, e) => {
        if (f === 4) op = text(s, e);
        else if (f === 7) domain = text(s, e);
      });
      const key = domain && domain !== 'ai.onnx' ? `${domain}:${op}` : op;
      counts[key] = (counts[key] ?? 0) + 1;
    });
  });
  return sortCounts(counts);
}

const sortCounts = (counts) => Object.fromEntries(Object.entries(counts).sort((a, b) => b[1] - a[1]));

/**
 * Child process: profile one runtime; events go to a file (native) or stdout (wasm prints them).
 * Native also writes ORT's optimized graph and prints its operator counts on an OPTIMIZED_GRAPH line.
 */
async function worker(args) {
  const model = args.models[0];
  const manifest = JSON.parse(readFileSync(join(model, 'model.json'), 'utf8'));
  const dir = mkdtempSync(join(tmpdir(), 'tiankong-profile-'));
  const optimized = join(dir, 'optimized.onnx');
  const extra = {
    enableProfiling: true,
    ...(args.worker === 'node' ? { profileFilePrefix: join(dir, 'profile'), optimizedModelFilePath: optimized } : {}),
  };
  const handle = await createSession(join(model, 'model.onnx'), args.worker, args.threads, extra);
  for (let i = 0; i < args.warmup + args.runs; i++) await runLogits(handle, feeds(manifest, args.seq));
  handle.session.endProfiling();
  if (args.worker === 'node') {
    const profile = readdirSync(dir).find((f) => f.startsWith('profile'));
    process.stdout.write(readFileSync(join(dir, profile), 'utf8'));
    process.stdout.write(`\nOPTIMIZED_GRAPH ${JSON.stringify(graphOpCounts(readFileSync(optimized)))}\n`);
  }
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
  const nodesOfOp = {};
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || !inWarmRun(e)) continue;
    byOp[e.args.op_name] = (byOp[e.args.op_name] ?? 0) + e.dur / 1000 / runs.length;
    const node = e.name.replace(/_kernel_time$/, '');
    byNode[node] = (byNode[node] ?? 0) + e.dur / 1000 / runs.length;
    (nodesOfOp[e.args.op_name] ??= new Set()).add(node);
  }
  // The nodes that ran, by operator: the graph this runtime executes after its own optimizer.
  const kernels = sortCounts(Object.fromEntries(Object.entries(nodesOfOp).map(([op, set]) => [op, set.size])));
  const round = (o) =>
    Object.fromEntries(
      Object.entries(o)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, +v.toFixed(2)]),
    );
  return {
    runs: runs.length,
    run_ms: +(runs.reduce((n, r) => n + r.dur, 0) / 1000 / runs.length).toFixed(1),
    nodes_run: Object.values(kernels).reduce((a, b) => a + b, 0),
    nodes_run_by_op: kernels,
    by_op: round(byOp),
    by_node: round(byNode),
  };
}

/** Profiles one model in both runtimes (one child process each) and prints its table. */
function profileModel(args, model) {
  const result = { model, seq: args.seq, threads: args.threads, runs: args.runs, date: new Date().toISOString() };
  const exported = graphOpCounts(readFileSync(join(model, 'model.onnx')));
  result.graph = { exported_nodes: Object.values(exported).reduce((a, b) => a + b, 0), exported_by_op: exported };
  result.runtimes = {};
  for (const kind of ['web', 'node']) {
    const child = spawnSync(
      process.execPath,
      [
        fileURLToPath(import.meta.url),
        ...['--worker', kind, '--seq', String(args.seq), '--threads', String(args.threads)],
        ...['--runs', String(args.runs), '--warmup', String(args.warmup), model],
      ],
      { encoding: 'utf8', maxBuffer: 1 << 28 },
    );
    if (child.status !== 0) throw new Error(`profiling ${kind} failed:\n${child.stderr}`);
    result.runtimes[kind] = summarize(parseEvents(child.stdout), args.warmup);
    const optimized = /^OPTIMIZED_GRAPH (.*)$/m.exec(child.stdout);
    if (optimized) {
      const counts = JSON.parse(optimized[1]);
      result.graph.optimized_nodes = Object.values(counts).reduce((a, b) => a + b, 0);
      result.graph.optimized_by_op = counts;
    }
  }
  const { web, node } = result.runtimes;
  const { graph } = result;
  console.log(
    `${model}: seq ${args.seq}, ${args.threads} thread(s), ${args.runs} warm runs: model run ${web.run_ms} ms wasm, ` +
      `${node.run_ms} ms native (${(web.run_ms / node.run_ms).toFixed(1)}x); nodes: ${graph.exported_nodes} exported, ` +
      `${graph.optimized_nodes} after ORT's optimizer (native dump), ${web.nodes_run} run in wasm, ${node.nodes_run} native`,
  );
  const num = (v, digits, width) => (v === undefined ? '–' : v.toFixed(digits)).padStart(width);
  console.log(
    `  ${'operator'.padEnd(40)} ${'nodes: optimized'.padStart(16)} ${'wasm'.padStart(5)} | ${'ms per run: wasm'.padStart(16)} ${'native'.padStart(8)} ${'ratio'.padStart(6)}`,
  );
  const ops = [...new Set([...Object.keys(web.by_op), ...Object.keys(node.by_op)])];
  for (const op of ops) {
    // The dump names contrib operators with their domain; profiles do not.
    const optimizedCount = graph.optimized_by_op?.[op] ?? graph.optimized_by_op?.[`com.microsoft:${op}`];
    const w = web.by_op[op];
    const n = node.by_op[op];
    console.log(
      `  ${op.padEnd(40)} ${num(optimizedCount, 0, 16)} ${num(web.nodes_run_by_op[op], 0, 5)} | ${num(w, 2, 16)} ${num(n, 2, 8)} ` +
        `${w !== undefined && n ? num(w / n, 1, 5) + 'x' : '     –'}`,
    );
  }
  console.log(`  slowest nodes in wasm (ms per run: wasm, native)`);
  for (const name of Object.keys(web.by_node).slice(0, 5))
    console.log(`  ${name.padEnd(64)} ${num(web.by_node[name], 2, 8)} ${num(node.by_node[name], 2, 8)}`);
  return result;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.worker) return worker(args);
  const results = args.models.map((model) => profileModel(args, model));
  if (args.out) {
    // One model: the same layout as before (model, seq, threads, runs, date, graph, runtimes).
    const report =
      results.length === 1
        ? results[0]
        : { seq: args.seq, threads: args.threads, runs: args.runs, date: new Date().toISOString(), models: results };
    writeFileSync(args.out, JSON.stringify(report, null, 2) + '\n');
    console.log(`wrote ${args.out}`);
  }
}

main().catch((error) => {
  console.error(`profile-ort: ${error.message}`);
  process.exit(1);
});
