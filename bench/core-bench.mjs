// Benchmarks of the C++ core across runtimes: tokenizer MB/s (wasm in Node, both builds;
// native C++; npm `tokenizers`), decode latency for 1/3/10 mask rows of a 21128-token
// vocab (wasm and native), and cache-hit latency. Prints a summary, writes JSON.
// usage: node bench/core-bench.mjs [--out FILE] [--stride N]   (scripts/bench-core builds what it needs first)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import tokenizers from 'tokenizers';
import { REPO_ROOT as root, dataDir, dataPath } from '../model/tooling/data-paths.mjs';
import { sampleLines } from './lib/corpus-sample.mjs';

const vocabPath = dataPath('vocab/bert-base-chinese/vocab.txt');
const corpusDir = dataPath('corpus');
const nativeDir = join(root, 'build', 'native', 'wasm');
const VOCAB = 21128;

function parseArgs(argv) {
  const args = { out: join(root, 'bench', 'results', 'core.json'), stride: 20 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in args)) throw new Error(`unknown option ${argv[i]} (usage: core-bench.mjs [--out FILE] [--stride N])`);
    args[key] = key === 'stride' ? Number(argv[i + 1]) : argv[i + 1];
  }
  return args;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Medians over rounds of the mean microseconds per call of fn: wall time, and process CPU
 * time (robust to the other jobs on this shared machine; the core uses one thread).
 */
function microsPerCall(fn, inner, rounds = 15) {
  for (let i = 0; i < inner; i++) fn();
  const wall = [];
  const cpu = [];
  for (let r = 0; r < rounds; r++) {
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < inner; i++) fn();
    wall.push(((performance.now() - start) * 1000) / inner);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / inner);
  }
  return { cpu_us: median(cpu), wall_us: median(wall) };
}

/** Best of `rounds` passes of fn over the input: MB/s per CPU second and per wall second. */
function throughput(fn, bytes, rounds = 3) {
  let cpu = Infinity;
  let wall = Infinity;
  for (let r = 0; r < rounds; r++) {
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    fn();
    wall = Math.min(wall, (performance.now() - start) / 1000);
    const used = process.cpuUsage(cpuStart);
    cpu = Math.min(cpu, (used.user + used.system) / 1e6);
  }
  return { mb_per_s: bytes / 1e6 / cpu, mb_per_wall_s: bytes / 1e6 / wall };
}

function randomLogits(rows) {
  let seed = 42;
  const next = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  return Float32Array.from({ length: rows * VOCAB }, () => 6 * (next() + next() + next() - 1.5));
}

async function benchWasm(variant, lines, bytes) {
  const { loadCore } = await import(pathToFileURL(join(root, 'dist', 'core', 'load-core.js')).href);
  const started = performance.now();
  const core = await loadCore({ variant });
  const loadMs = performance.now() - started;
  const m = core.module;
  const tokenizer = new m.Tokenizer(new Uint8Array(readFileSync(vocabPath)), {
    cleanText: true,
    handleChineseChars: true,
    stripAccents: false,
    lowercase: false,
    maxInputCharsPerWord: 100,
    maxLength: 1 << 30,
  });
  const tokenizerRate = throughput(() => {
    for (const line of lines) tokenizer.encode(line);
  }, bytes);
  const decoder = new m.Decoder(tokenizer, {
    topK: 5,
    threshold: 0,
    excludeSpecial: true,
    excludeSubwords: true,
    allowIds: new Int32Array(0),
    denyIds: new Int32Array(0),
  });
  const decodeUs = {};
  for (const rows of [1, 3, 10]) {
    const logits = randomLogits(rows);
    decodeUs[`rows_${rows}`] = microsPerCall(() => decoder.decode(logits, rows, VOCAB), 20);
  }
  const cache = new m.FingerprintCache(4096, 16 << 20);
  const ids = Int32Array.from({ length: 64 }, (_, i) => 100 + ((i * 37) % 20000));
  const masks = new Int32Array([10, 40]);
  const value = JSON.stringify([{ ids: [1, 2, 3, 4, 5], probabilities: [0.5, 0.2, 0.1, 0.05, 0.01], other: 0.14 }]);
  for (let k = 0; k < 1000; k++) {
    ids[1] = k;
    cache.put(ids, masks, 'topK=5', value);
  }
  let probe = 0;
  const cacheHitUs = microsPerCall(() => {
    ids[1] = probe++ % 1000;
    cache.get(ids, masks, 'topK=5');
  }, 5000);
  const result = {
    load_ms: loadMs,
    build: m.buildInfo(),
    tokenizer: tokenizerRate,
    decode_us: decodeUs,
    cache_hit_us: cacheHitUs,
  };
  [cache, decoder, tokenizer].forEach((o) => o.delete());
  core.dispose();
  return result;
}

async function benchHf(lines, bytes) {
  const tokenizer = tokenizers.Tokenizer.fromFile(dataPath('vocab/bert-base-chinese/tokenizer.json'));
  // encodeBatch runs on Rust threads: wall time is the fair measure there.
  let batchWall = Infinity;
  for (let round = 0; round < 3; round++) {
    const start = performance.now();
    for (let i = 0; i < lines.length; i += 2048) await tokenizer.encodeBatch(lines.slice(i, i + 2048));
    batchWall = Math.min(batchWall, (performance.now() - start) / 1000);
  }
  // One call per text, as an app tokenizes user input.
  const single = lines.slice(0, 2000);
  const singleBytes = single.reduce((n, l) => n + Buffer.byteLength(l), 0);
  const start = performance.now();
  for (const line of single) await tokenizer.encode(line);
  const singleWall = (performance.now() - start) / 1000;
  return {
    encode_batch_mb_per_wall_s: bytes / 1e6 / batchWall,
    encode_one_by_one_mb_per_wall_s: singleBytes / 1e6 / singleWall,
  };
}

function benchNative(lines) {
  const decoderBench = join(nativeDir, 'decoder_bench');
  const tokenizerBench = join(nativeDir, 'tokenizer_bench');
  if (!existsSync(decoderBench) || !existsSync(tokenizerBench)) {
    return { skipped: `native benchmarks not built in ${nativeDir}` };
  }
  const dir = mkdtempSync(join(tmpdir(), 'tiankong-bench-'));
  try {
    writeFileSync(join(dir, 'lines.txt'), lines.join('\n') + '\n');
    const run = (cmd, args) => {
      const r = spawnSync(cmd, args, { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
      return r.stdout;
    };
    // tokenizer_bench prints one JSON object (MB/s per CPU second).
    const tokenizer = JSON.parse(run(tokenizerBench, ['--vocab', vocabPath, '--repeat', '3', join(dir, 'lines.txt')]));
    process.stdout.write(run(decoderBench, ['--vocab', vocabPath, '--json', join(dir, 'dec.json')]));
    return { tokenizer, decoder: JSON.parse(readFileSync(join(dir, 'dec.json'), 'utf8')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const args = parseArgs(process.argv.slice(2));
if (!existsSync(vocabPath)) throw new Error(`core-bench: shared data not found at ${dataDir()}`);
const lines = sampleLines(corpusDir, args.stride);
const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
console.log(
  `core-bench: ${lines.length} corpus lines, ${(bytes / 1e6).toFixed(2)} MB UTF-8; load average ${loadavg()[0].toFixed(1)} on ${cpus().length} CPUs`,
);

const results = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model, load_average_1m: loadavg()[0], node: process.version },
  input: { lines: lines.length, bytes },
  native: benchNative(lines),
  wasm: {},
  hf_tokenizers: await benchHf(lines, bytes),
};
for (const variant of ['single', 'threads']) results.wasm[variant] = await benchWasm(variant, lines, bytes);

const f = (x, d = 1) => x.toFixed(d);
console.log('\ntokenizer throughput, MB/s of UTF-8 input (per CPU second; wall in parentheses)');
if (results.native.tokenizer) console.log(`  native C++              ${f(results.native.tokenizer.mb_per_s)}`);
for (const [v, r] of Object.entries(results.wasm)) {
  console.log(`  wasm ${v.padEnd(8)} in Node   ${f(r.tokenizer.mb_per_s)} (${f(r.tokenizer.mb_per_wall_s)})`);
}
console.log(`  npm tokenizers encodeBatch (Rust threads)  (${f(results.hf_tokenizers.encode_batch_mb_per_wall_s)})`);
console.log(
  `  npm tokenizers encode, one text per call   (${f(results.hf_tokenizers.encode_one_by_one_mb_per_wall_s)})`,
);
console.log('\ndecode (top-5, vocab 21128), us per call, CPU (wall)');
for (const rows of [1, 3, 10]) {
  const native = results.native.decoder?.decode?.[`rows_${rows}`];
  const cells = Object.entries(results.wasm).map(([v, r]) => {
    const t = r.decode_us[`rows_${rows}`];
    return `wasm ${v} ${f(t.cpu_us)} (${f(t.wall_us)})`;
  });
  console.log(
    `  ${String(rows).padStart(2)} rows: ${native ? `native ${f(native.cpu_us)} (${f(native.wall_us)}), ` : ''}${cells.join(', ')}`,
  );
}
console.log('\ncache hit, us per get (CPU)');
if (results.native.decoder) console.log(`  native (MakeKey + Get) ${f(results.native.decoder.cache_hit_cpu_us, 3)}`);
for (const [v, r] of Object.entries(results.wasm)) {
  console.log(`  wasm ${v} (from JS) ${f(r.cache_hit_us.cpu_us, 2)}; module load ${f(r.load_ms)} ms`);
}

mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');
console.log(`\nwrote ${args.out}`);
