// Side-by-side benchmark: tiankong (browser, wasm) vs transformers.js (browser, wasm) vs
// onnxruntime-node (native bound), same INT8 bert-base-chinese-shaped weights, same
// sentences, same thread count, in one run. The machine is shared, so absolute numbers
// drift: contenders are interleaved call by call (order rotated every run) and every row
// reports ratios measured under the same conditions. Also: cold start, cache hits, page
// memory, and tokenizer throughput (wasm in the browser vs transformers.js vs native).
// In the same run: the encoder as dynamic INT8 vs fp16-weights (tiankong, per model size,
// interleaved the same way), the app's first and second visit (bench/lib/app-visits.mjs), and
// in Node the default model's agreement (scripts/evaluate-model, scripts/measure-window) and
// the output layer's cost (bench/output-layer-bench.mjs).
//
// usage: node bench/run.mjs --models DIR [--threads 1,2] [--lengths 8,16,32,64,128]
//          [--masks 1,3] [--runs 30] [--warmup 2] [--tokenizer-stride 20] [--out-dir bench/results]
//          [--encoder-lengths 16,128] [--shipped model/default] [--app-profiles 3]
//          [--no-tokenizers] [--no-forms] [--no-app] [--no-agreement]
//          [--update-doc BENCHMARKS.md] [--report-only bench/results/bench.json]
// DIR holds tiankong/ (the export tiankong loads: core graph + output layer, windows for long
// inputs), tiankong-fp16/ (the same with fp16-weights), native/ (mask-only export for
// onnxruntime-node) and transformers-js/ (--full-logits export) of the same checkpoint, and
// default-int8/, default-fp16/, default-fp32/ (the default model's core exports); scripts/bench
// prepares it. --shipped is the shipped default model (with its corpus memory): the app is built
// with it, and the window agreement is measured on it.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import tokenizers from 'tokenizers';
import { dataPath } from '../model/tooling/data-paths.mjs';
import { CHROMIUM } from '../tests/harness/chromium.mjs';
import { launchBrowser, openHarness } from './lib/browser.mjs';
import { renderChart } from './lib/chart.mjs';
import { sampleLines } from './lib/corpus-sample.mjs';
import { createNativeFillMask } from './lib/native.mjs';
import { benchSentences } from './lib/sentences.mjs';
import { benchMounts, startBenchServer } from './server.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const corpusDir = dataPath('corpus');
const TOP_K = 5;
const BROWSER = ['tiankong', 'transformers'];

function parseArgs(argv) {
  const args = {
    models: null,
    threads: '1,2',
    lengths: '8,16,32,64,128',
    masks: '1,3',
    runs: 30,
    warmup: 2,
    'tokenizer-stride': 20,
    'out-dir': join(repoRoot, 'bench', 'results'),
    tokenizers: true,
    forms: true,
    app: true,
    phone: true,
    agreement: true,
    'encoder-lengths': '16,128',
    shipped: join(repoRoot, 'model', 'default'),
    'app-profiles': 3,
    'update-doc': null,
    'report-only': null,
  };
  const switches = {
    'no-tokenizers': 'tokenizers',
    'no-forms': 'forms',
    'no-app': 'app',
    'no-phone': 'phone',
    'no-agreement': 'agreement',
  };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '');
    if (key in switches) args[switches[key]] = false;
    else if (key in args && argv[i].startsWith('--') && i + 1 < argv.length) args[key] = argv[++i];
    else throw new Error(`unknown or incomplete option ${argv[i]}`);
  }
  if (!args.models && !args['report-only']) throw new Error('--models DIR is required (scripts/bench prepares it)');
  const list = (s) => String(s).split(',').map(Number);
  return {
    ...args,
    models: args.models && resolve(args.models),
    threads: list(args.threads),
    lengths: list(args.lengths),
    masks: list(args.masks),
    runs: Number(args.runs),
    warmup: Number(args.warmup),
    stride: Number(args['tokenizer-stride']),
    encoderLengths: list(args['encoder-lengths']),
    shipped: resolve(args.shipped),
    appProfiles: Number(args['app-profiles']),
    outDir: resolve(args['out-dir']),
  };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

function summarize(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: +percentile(sorted, 0.5).toFixed(2), p95: +percentile(sorted, 0.95).toFixed(2), runs: times.length };
}

function machine() {
  const flags = (readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1] ?? '').trim().split(/\s+/);
  const simd = ['sse4_2', 'avx', 'avx2', 'fma', 'avx512f', 'avx512_vnni', 'avx_vnni'].filter((f) => flags.includes(f));
  let chromium = null;
  try {
    chromium = execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    /* reported as null */
  }
  return {
    cpu_model: cpus()[0]?.model,
    logical_cpus: cpus().length,
    simd_flags: simd,
    avx512: flags.some((f) => f.startsWith('avx512')),
    memory_gib: +(totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
    chromium,
    load_average_at_start: loadavg().map((x) => +x.toFixed(2)),
  };
}

const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

/** Latency rows for one thread count: every contender loaded, then calls interleaved. */
async function benchThreads({ args, browser, origin, sentences, threads, flip, onRow }) {
  const { page, logs } = await openHarness(browser.context, origin);
  page.setDefaultTimeout(30 * 60_000);
  const evaluate = (fn, arg) =>
    page.evaluate(fn, arg).catch((error) => {
      throw new Error(`${error.message}\npage log:\n${logs.slice(-20).join('\n')}`);
    });
  try {
    if (!(await evaluate(() => window.bench.isolated)))
      throw new Error('the harness page is not cross-origin isolated');
    const coldText = sentences.get(`${args.lengths[0]}x1`).at(-1);
    const cold = {};
    const memory = { baseline_bytes: await evaluate(() => window.bench.memory()) };
    let before = memory.baseline_bytes;
    // Alternate which contender loads first, so neither always gets the quieter start.
    for (const name of flip ? [...BROWSER].reverse() : BROWSER) {
      process.stdout.write(`  cold load ${name} (${threads} thread${threads > 1 ? 's' : ''})... `);
      const loaded = await evaluate(([n, t, s]) => window.bench.load(n, t, s), [name, threads, coldText]);
      if (loaded.threads !== threads)
        throw new Error(`${name} runs ${loaded.threads} threads, ${threads} requested (${loaded.threadsReason ?? ''})`);
      const after = await evaluate(() => window.bench.memory());
      memory[name] = { bytes: after - before };
      before = after;
      cold[name] = {
        load_ms: Math.round(loaded.loadMs),
        first_prediction_ms: Math.round(loaded.coldMs),
        ...(loaded.ortVersion ? { ort_version: loaded.ortVersion } : {}),
      };
      console.log(
        `${fmt(loaded.coldMs)} ms to the first prediction, +${(memory[name].bytes / 2 ** 20).toFixed(0)} MiB page memory`,
      );
    }
    const nativeStart = performance.now();
    const native = await createNativeFillMask({
      // The whole network in native ORT: the mask-only export (native/) when tiankong/ is a core export.
      modelDir: join(args.models, existsSync(join(args.models, 'native', 'model.json')) ? 'native' : 'tiankong'),
      tokenizerJson: join(args.models, 'transformers-js', 'tokenizer.json'),
      threads,
      topK: TOP_K,
    });
    await native.fill(coldText);
    cold.native = { first_prediction_ms: Math.round(performance.now() - nativeStart) };
    console.log(`  cold load native: ${fmt(cold.native.first_prediction_ms)} ms to the first prediction`);

    const calls = {
      tiankong: (text) => evaluate(([t]) => window.bench.fill('tiankong', t), [text]),
      transformers: (text) => evaluate(([t]) => window.bench.fill('transformers', t), [text]),
      native: async (text) => {
        const started = performance.now();
        const result = await native.fill(text);
        return { ms: performance.now() - started, ...result, cached: false };
      },
    };
    const names = Object.keys(calls);
    const rows = [];
    for (const chars of args.lengths) {
      for (const masks of args.masks) {
        const texts = sentences.get(`${chars}x${masks}`);
        const times = Object.fromEntries(names.map((n) => [n, []]));
        // Where tiankong's time goes, per call: the model run (timings.inferenceMs: the core's input
        // embeddings, ORT session.run, the core's output layer; every window of a long input), the
        // rest of its fill in the Worker (tokenize, top-k, cache), and the Worker round trip.
        const split = { ort_run: [], tokenize_decode: [], worker_round_trip: [] };
        const filled = {};
        let agree = 0;
        for (let i = 0; i < args.warmup + args.runs; i++) {
          const order = names.map((_, k) => names[(k + i) % names.length]);
          const results = {};
          for (const name of order) results[name] = await calls[name](texts[i]);
          if (results.tiankong.cached)
            throw new Error(`tiankong answered run ${i} from its cache: sentences must be distinct`);
          for (const name of names) filled[name] = results[name].filled;
          if (i < args.warmup) continue;
          for (const name of names) times[name].push(results[name].ms);
          const tk = results.tiankong;
          split.ort_run.push(tk.inferenceMs);
          split.tokenize_decode.push(tk.totalMs - tk.inferenceMs);
          split.worker_round_trip.push(tk.ms - tk.totalMs);
          if (results.transformers.top1 === results.native.top1) agree++;
        }
        const contenders = Object.fromEntries(
          names.map((n) => [n, { ...summarize(times[n]), masks_filled: filled[n] }]),
        );
        const row = {
          threads,
          chars,
          masks,
          tokens: chars + 2,
          contenders,
          speedup_vs_transformers: +(contenders.transformers.p50 / contenders.tiankong.p50).toFixed(3),
          slowdown_vs_native: +(contenders.tiankong.p50 / contenders.native.p50).toFixed(3),
          top1_agreement_transformers_native: +(agree / args.runs).toFixed(3),
          tiankong_breakdown_p50_ms: Object.fromEntries(Object.entries(split).map(([k, v]) => [k, summarize(v).p50])),
        };
        rows.push(row);
        onRow(row);
        console.log(
          `  ${String(chars).padStart(3)} chars ${masks} mask${masks > 1 ? 's' : ' '} | p50/p95 ms: tiankong ${fmt(contenders.tiankong.p50)}/${fmt(contenders.tiankong.p95)}` +
            ` (${filled.tiankong} filled), transformers.js ${fmt(contenders.transformers.p50)}/${fmt(contenders.transformers.p95)} (${filled.transformers} filled),` +
            ` native ${fmt(contenders.native.p50)}/${fmt(contenders.native.p95)} | tiankong ${row.speedup_vs_transformers.toFixed(2)}x faster than transformers.js,` +
            ` ${row.slowdown_vs_native.toFixed(2)}x native | tiankong split ${JSON.stringify(row.tiankong_breakdown_p50_ms)}`,
        );
      }
    }
    // Cache hits: the same text again (tiankong's LRU result cache); transformers.js has none.
    const repeated = sentences.get(`${args.lengths.at(-1)}x1`)[0];
    const hits = [];
    for (let i = 0; i < args.runs; i++) {
      const r = await calls.tiankong(repeated);
      if (!r.cached) throw new Error('tiankong did not answer a repeated sentence from its cache');
      hits.push(r.ms);
    }
    const cacheHit = { chars: args.lengths.at(-1), ...summarize(hits) };
    console.log(`  cache hit (${cacheHit.chars} chars, tiankong): p50 ${cacheHit.p50} ms, p95 ${cacheHit.p95} ms`);
    for (const name of BROWSER) await evaluate(([n]) => window.bench.dispose(n), [name]);
    return { rows, cold, memory, cacheHit };
  } finally {
    await page.close();
  }
}

/**
 * The encoder forms of one model size side by side: tiankong on each model of `group.models`
 * (name → folder under /models/) in one page, loaded one after the other (Cache Storage cleared:
 * cold first prediction, page memory growth per load), then calls interleaved per sentence as in
 * benchThreads; last, each model is loaded again with its files in Cache Storage (the runtime's
 * part of a second visit).
 */
async function benchForms({ args, browser, origin, sentences, threads, group, flip }) {
  const { page, logs } = await openHarness(browser.context, origin);
  page.setDefaultTimeout(30 * 60_000);
  const evaluate = (fn, arg) =>
    page.evaluate(fn, arg).catch((error) => {
      throw new Error(`${error.message}\npage log:\n${logs.slice(-20).join('\n')}`);
    });
  const names = Object.keys(group.models);
  const coldText = sentences.get(`${group.lengths[0]}x1`).at(-1);
  const models = {};
  try {
    let before = await evaluate(() => window.bench.memory());
    for (const name of flip ? [...names].reverse() : names) {
      const loaded = await evaluate(
        ([n, t, s, model]) => window.bench.load(n, t, s, { model }),
        [name, threads, coldText, `/models/${name}/`],
      );
      if (loaded.threads !== threads) throw new Error(`${name} runs ${loaded.threads} threads, ${threads} requested`);
      const after = await evaluate(() => window.bench.memory());
      models[name] = { first_prediction_ms: Math.round(loaded.coldMs), memory_bytes: after - before };
      before = after;
      console.log(
        `  ${name} (${threads} thread${threads > 1 ? 's' : ''}): cold ${fmt(loaded.coldMs)} ms to the first prediction, ` +
          `+${(models[name].memory_bytes / 2 ** 20).toFixed(0)} MiB page memory`,
      );
    }
    const rows = [];
    for (const chars of group.lengths) {
      for (const masks of group.masks) {
        const texts = sentences.get(`${chars}x${masks}`);
        const times = Object.fromEntries(names.map((n) => [n, []]));
        for (let i = 0; i < args.warmup + args.runs; i++) {
          for (const k of names.keys()) {
            const name = names[(k + i) % names.length];
            const result = await evaluate(([n, t]) => window.bench.fill(n, t), [name, texts[i]]);
            if (result.cached) throw new Error(`${name} answered run ${i} from its cache: sentences must be distinct`);
            if (i >= args.warmup) times[name].push(result.ms);
          }
        }
        const row = { chars, masks, models: Object.fromEntries(names.map((n) => [n, summarize(times[n])])) };
        rows.push(row);
        console.log(
          `  ${String(chars).padStart(3)} chars ${masks} mask${masks > 1 ? 's' : ' '} | p50/p95 ms: ` +
            names.map((n) => `${n} ${fmt(row.models[n].p50)}/${fmt(row.models[n].p95)}`).join(', '),
        );
      }
    }
    for (const name of names) await evaluate(([n]) => window.bench.dispose(n), [name]);
    for (const name of names) {
      const loaded = await evaluate(
        ([n, t, s, model]) => window.bench.load(n, t, s, { model, keepCache: true }),
        [name, threads, coldText, `/models/${name}/`],
      );
      models[name].first_prediction_from_cache_ms = Math.round(loaded.coldMs);
      await evaluate(([n]) => window.bench.dispose(n), [name]);
    }
    console.log(
      `  first prediction with the model in Cache Storage: ${names.map((n) => `${n} ${models[n].first_prediction_from_cache_ms} ms`).join(', ')}`,
    );
    return { group: group.name, title: group.title, threads, models, rows };
  } finally {
    await page.close();
  }
}

/**
 * The encoder-form groups whose exports exist: the default model (INT8, fp16-weights, and the
 * shipped model with its corpus memory) at every length, bert-base shape (INT8 = tiankong/,
 * fp16-weights, and the INT8 mask-only graph tiankong ran before the core graph = native/) at
 * --encoder-lengths, 1 mask.
 */
function formGroups(args) {
  const shape = (dir) => {
    const a = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')).architecture;
    return `${a.num_hidden_layers} layers × ${a.hidden_size}, vocab ${a.vocab_size}`;
  };
  const groups = [];
  const defaultInt8 = join(args.models, 'default-int8');
  if (existsSync(join(defaultInt8, 'model.json')) && existsSync(join(args.models, 'default-fp16', 'model.json'))) {
    const models = { 'default-int8': defaultInt8, 'default-fp16': join(args.models, 'default-fp16') };
    if (existsSync(join(args.shipped, 'model.json'))) models['default-shipped'] = args.shipped;
    groups.push({
      name: 'default',
      title: `default model (${shape(defaultInt8)})`,
      lengths: args.lengths,
      masks: args.masks,
      models,
    });
  } else console.warn('bench: no default-int8/ and default-fp16/ exports: the default model is not measured');
  if (existsSync(join(args.models, 'tiankong-fp16', 'model.json'))) {
    const models = { tiankong: join(args.models, 'tiankong'), 'tiankong-fp16': join(args.models, 'tiankong-fp16') };
    if (existsSync(join(args.models, 'native', 'model.json'))) models['bert-mask-only'] = join(args.models, 'native');
    groups.push({
      name: 'bert-base',
      title: `bert-base shape (${shape(models.tiankong)})`,
      lengths: args.encoderLengths,
      masks: [1],
      models,
    });
  } else console.warn('bench: no tiankong-fp16/ export: bert-base encoder forms are not compared');
  return groups;
}

/**
 * Runs the repository's Node script `script` with `scriptArgs` plus `jsonFlag file` and returns
 * the JSON it wrote there, or { error } if it failed (the run goes on; the report says so).
 */
function companion(script, scriptArgs, file, jsonFlag = '--json') {
  console.log(`  ${script} ${scriptArgs.map((a) => relative(repoRoot, a) || a).join(' ')}`);
  const child = spawnSync(process.execPath, [join(repoRoot, script), ...scriptArgs, jsonFlag, file], {
    cwd: repoRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 1 << 26,
  });
  if (child.status !== 0) {
    const error = `${script} exited with ${child.status}: ${(child.stderr || child.stdout).trim().split('\n').slice(-3).join(' / ')}`;
    console.warn(`  ${error}`);
    return { error };
  }
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * What the speed-ups cost in accuracy, on held-out text, and the output layer's cost (Node):
 * top-1 agreement of the default model's INT8 and fp16-weights exports with its fp32 export
 * (scripts/evaluate-model, model alone); windowed vs full-text top-1 on long held-out lines
 * (scripts/measure-window on the shipped model) at its own window and at the bert-base
 * comparison's; the C++ output layer per mask (bench/output-layer-bench.mjs).
 */
function measureCompanions(args) {
  const out = {};
  const fp32 = join(args.models, 'default-fp32');
  if (existsSync(join(fp32, 'model.json'))) {
    for (const form of ['int8', 'fp16']) {
      const r = companion(
        'scripts/evaluate-model',
        [join(args.models, `default-${form}`), '--fp32', fp32],
        join(args.outDir, `agreement-default-${form}.json`),
      );
      out[`default_${form}_vs_fp32`] = r.error
        ? r
        : Object.fromEntries(
            Object.entries(r.suites).map(([suite, e]) => [
              suite,
              { cases: e.cases, top1_agreement: e.int8Fp32Top1Agreement, top1: e.model.top1 },
            ]),
          );
    }
  }
  const windowOf = (dir) => {
    const w = existsSync(join(dir, 'model.json')) && JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')).window;
    return w ? `${w.threshold}:${w.size}` : null;
  };
  const model = existsSync(join(args.shipped, 'model.json')) ? args.shipped : join(args.models, 'default-int8');
  if (existsSync(join(model, 'model.json'))) {
    out.window = [];
    for (const window of new Set([windowOf(model), windowOf(join(args.models, 'tiankong'))].filter(Boolean))) {
      const file = join(args.outDir, `window-${window.replace(':', '-')}.json`);
      out.window.push({ ...companion('scripts/measure-window', [model, '--window', window], file), window });
    }
  }
  const layer = companion('bench/output-layer-bench.mjs', [], join(args.outDir, 'output-layer.json'), '--out');
  out.output_layer = layer.error ? layer : { node: layer.node, chromium: layer.chromium };
  return out;
}

/** Tokenizer MB/s: tiankong wasm and transformers.js in the page, HF tokenizers (native) here. */
async function benchTokenizers({ args, browser, origin }) {
  const lines = sampleLines(corpusDir, args.stride);
  const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
  console.log(`tokenizers: ${lines.length} corpus lines (every ${args.stride}th), ${(bytes / 1e6).toFixed(2)} MB`);
  const { page } = await openHarness(browser.context, origin);
  page.setDefaultTimeout(30 * 60_000);
  const rounds = 3;
  let inBrowser;
  try {
    inBrowser = await page.evaluate(([l, r]) => window.bench.tokenizers(l, r), [lines, rounds]);
  } finally {
    await page.close();
  }
  const hf = tokenizers.Tokenizer.fromFile(join(args.models, 'transformers-js', 'tokenizer.json'));
  let oneByOne = Infinity;
  let batch = Infinity;
  let tokens = 0;
  for (let round = 0; round < rounds; round++) {
    let started = performance.now();
    tokens = 0;
    for (const line of lines) tokens += (await hf.encode(line)).getLength();
    oneByOne = Math.min(oneByOne, (performance.now() - started) / 1000);
    started = performance.now();
    for (let i = 0; i < lines.length; i += 4096) await hf.encodeBatch(lines.slice(i, i + 4096));
    batch = Math.min(batch, (performance.now() - started) / 1000);
  }
  const result = {
    lines: lines.length,
    bytes,
    tiankong_wasm_browser: inBrowser.tiankong,
    transformers_js_browser: inBrowser.transformers,
    hf_tokenizers_native_encode: { mb_per_s: bytes / 1e6 / oneByOne, seconds: oneByOne, tokens },
    hf_tokenizers_native_encode_batch: {
      mb_per_s: bytes / 1e6 / batch,
      seconds: batch,
      rayon_threads: process.env.RAYON_NUM_THREADS ?? 'default',
    },
  };
  const counts = { tiankong: inBrowser.tiankong.tokens, transformers: inBrowser.transformers.tokens, native: tokens };
  result.token_counts_agree = new Set(Object.values(counts)).size === 1;
  result.token_counts = counts;
  for (const [name, r] of Object.entries(result)) {
    if (r?.mb_per_s) console.log(`  ${name.padEnd(34)} ${r.mb_per_s.toFixed(2).padStart(7)} MB/s`);
  }
  console.log(`  token counts ${result.token_counts_agree ? 'agree' : 'DIFFER'}: ${JSON.stringify(counts)}`);
  return result;
}

/** Speedup per mask actually filled: transformers.js fills only the first [MASK] of a text. */
function perFilledMask({ contenders: { tiankong, transformers } }) {
  return transformers.p50 / transformers.masks_filled / (tiankong.p50 / tiankong.masks_filled);
}

function split({ tiankong_breakdown_p50_ms: b }) {
  return b ? `${fmt(b.ort_run)} / ${b.tokenize_decode.toFixed(1)} / ${b.worker_round_trip.toFixed(1)}` : '–';
}

/** How a core export runs: the C++ core's part and its window (model.json). */
function describeCore(dir) {
  const m = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
  const window = m.window
    ? `; inputs over ${m.window.threshold} tokens read through ${m.window.size}-token windows around the masks`
    : '';
  return `${m.logits} graph: the C++ core computes the input embeddings and the ${m.head?.dtype ?? ''} output layer${window}`;
}

/** The column name of a model in the encoder-form tables. */
function formLabel(name, report) {
  if (name.endsWith('shipped')) return `shipped (${report.shipped}, with memory)`;
  if (name.endsWith('mask-only')) return 'INT8, mask-only graph (no window)';
  return name.endsWith('fp16') ? 'fp16-weights' : 'INT8';
}

/** Encoder forms per model size, the app's visits, agreement and the output layer, as markdown lines. */
function companionMarkdown(report) {
  const lines = [];
  const mib = (b) => (b / 2 ** 20).toFixed(0);
  for (const title of new Set((report.forms ?? []).map((f) => f.title))) {
    const forms = report.forms.filter((f) => f.title === title);
    const names = Object.keys(forms[0].models);
    const [int8, fp16] = [names.find((n) => formLabel(n, report) === 'INT8'), names.find((n) => n.endsWith('fp16'))];
    lines.push(
      '',
      `Encoder forms, ${title}, tiankong in one page, calls interleaved (p50 / p95 ms):`,
      '',
      `| threads | chars | masks | ${names.map((n) => formLabel(n, report)).join(' | ')} | fp16-weights / INT8 p50 |`,
      `|---|---|---|${names.map(() => '---|').join('')}---|`,
    );
    for (const f of forms) {
      for (const r of f.rows) {
        const cells = names.map((n) => `${fmt(r.models[n].p50)} / ${fmt(r.models[n].p95)}`);
        const ratio = (r.models[fp16].p50 / r.models[int8].p50).toFixed(2);
        lines.push(`| ${f.threads} | ${r.chars} | ${r.masks} | ${cells.join(' | ')} | ${ratio}× |`);
      }
    }
    lines.push(
      '',
      '| threads | form | page memory MiB | cold: first prediction ms | first prediction, model in Cache Storage ms |',
      '|---|---|---|---|---|',
    );
    for (const f of forms) {
      for (const n of names) {
        const m = f.models[n];
        lines.push(
          `| ${f.threads} | ${formLabel(n, report)} | ${mib(m.memory_bytes)} | ${m.first_prediction_ms} | ${m.first_prediction_from_cache_ms} |`,
        );
      }
    }
  }
  const app = report.app_visits;
  if (app) {
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const cell = (xs) => `${median(xs)} (${Math.min(...xs)}–${Math.max(...xs)})`;
    const mb = (xs) => (median(xs) / 1e6).toFixed(2);
    lines.push(
      '',
      `App (web/app built with ${report.shipped}, scripts/serve.mjs on localhost), time from navigation to the first answer,` +
        ` median (range) over ${app.profiles} fresh browser profile${app.profiles > 1 ? 's' : ''}:`,
      '',
      '| first visit ms | second visit ms (model in Cache Storage) | MB sent until the first answer (first / second visit) |',
      '|---|---|---|',
      `| ${cell(app.first_visit_ms)} | ${cell(app.second_visit_ms)} | ${mb(app.bytes_first_visit_to_answer)} / ${mb(app.bytes_second_visit_to_answer)} |`,
    );
  }
  const c = report.companions;
  if (!c) return lines;
  const pct = (x) => (typeof x === 'number' ? `${(100 * x).toFixed(1)}%` : '–');
  const [int8, fp16] = [c.default_int8_vs_fp32, c.default_fp16_vs_fp32];
  if (int8 || fp16) {
    lines.push(
      '',
      'Default model, top-1 agreement with its fp32 export on held-out text (scripts/evaluate-model, model alone):',
      '',
    );
    if (int8?.error || fp16?.error) lines.push(`Not measured: ${int8?.error ?? fp16.error}`);
    else {
      lines.push(
        '| suite | cases | INT8 = fp32 | fp16-weights = fp32 | model top-1 (INT8 / fp16-weights) |',
        '|---|---|---|---|---|',
      );
      for (const [suite, e] of Object.entries(int8)) {
        lines.push(
          `| ${suite} | ${e.cases} | ${pct(e.top1_agreement)} | ${pct(fp16[suite]?.top1_agreement)} | ${pct(e.top1)} / ${pct(fp16[suite]?.top1)} |`,
        );
      }
    }
  }
  if (c.window?.length) {
    lines.push(
      '',
      'Window vs full text on long held-out lines (scripts/measure-window, one character masked, memory off; speed: wasm in Node, 2 threads):',
      '',
      '| model | window (threshold:size tokens) | cases | mean chars | top-1 agreement | top-1 accuracy windowed / full | p50 ms windowed / full | speed-up |',
      '|---|---|---|---|---|---|---|---|',
    );
    for (const w of c.window) {
      lines.push(
        w.error
          ? `| – | ${w.window} | not measured: ${w.error} | | | | | |`
          : `| ${w.model} | ${w.window} | ${w.cases} | ${w.mean_chars} | ${pct(w.top1_agreement)}` +
              ` | ${pct(w.top1_accuracy?.windowed)} / ${pct(w.top1_accuracy?.full)} | ${w.wasm_p50_ms.windowed} / ${w.wasm_p50_ms.full} | ${w.speedup}× |`,
      );
    }
  }
  if (c.output_layer && !c.output_layer.error) {
    lines.push(...outputLayerMarkdown(report));
  } else if (c.output_layer) lines.push('', `Output layer not measured: ${c.output_layer.error}`);
  return lines;
}

/**
 * The C++ output layer per mask and its share of a 1-mask fill (p50) at the most threads measured:
 * the bert-base shape against tiankong's fill (int8 table), the default model's against the
 * default-int8 form's fill (same table type as the shipped model).
 */
function outputLayerMarkdown(report) {
  const threads = Math.max(...report.rows.map((r) => r.threads));
  const fill = (chars) => {
    const bert = report.rows.find((r) => r.threads === threads && r.chars === chars && r.masks === 1);
    const forms = (report.forms ?? []).find((f) => f.group === 'default' && f.threads === threads);
    const small = forms?.rows.find((r) => r.chars === chars && r.masks === 1);
    return { bert: bert?.contenders.tiankong.p50, default: small?.models['default-int8'].p50 };
  };
  const lines = [
    '',
    `Output layer in the C++ core (bench/output-layer-bench.mjs, single-threaded core), and its share of a 1-mask fill p50 at ${threads} threads (INT8 encoder):`,
    '',
    '| shape | ms per mask, Chromium / Node | share at 16 chars | share at 128 chars |',
    '|---|---|---|---|',
  ];
  const { node, chromium } = report.companions.output_layer;
  for (const [shape, m] of Object.entries(chromium)) {
    const key = shape.startsWith('default') ? 'default' : 'bert';
    const share = (chars) => {
      const p50 = fill(chars)[key];
      return p50 ? `${((100 * m.logits_ms_per_mask) / p50).toFixed(1)}%` : '–';
    };
    lines.push(
      `| ${shape} | ${m.logits_ms_per_mask.toFixed(3)} / ${node[shape].logits_ms_per_mask.toFixed(3)} | ${share(16)} | ${share(128)} |`,
    );
  }
  return lines;
}

function markdown(report) {
  const m = report.machine;
  const lines = [
    `Run ${report.date} · ${m.cpu_model}, ${m.logical_cpus} logical CPUs, SIMD: ${m.simd_flags.join(' ')}` +
      `${m.avx512 ? '' : ' (no AVX-512)'} · ${m.memory_gib} GiB · Node ${m.node} · ${m.chromium}` +
      ` · load average (1/5/15 min) at start ${m.load_average_at_start.join(' / ')}` +
      `${m.load_average_at_end ? `, at end ${m.load_average_at_end.join(' / ')}` : ''}`,
    `Model: ${report.model.description}. ${report.runs} warm runs per row after ${report.warmup} warm-up runs, distinct sentence per run; top-${TOP_K}.`,
    '',
    '| threads | chars | masks | tiankong p50 / p95 ms | transformers.js p50 / p95 ms | native p50 / p95 ms | masks filled (tk / tjs / native) | tiankong speedup vs transformers.js | per filled mask | tiankong / native | tiankong split ms: model run (core embeddings + ORT + core output layer) / tokenize+top-k / Worker trip |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of report.rows) {
    const c = r.contenders;
    lines.push(
      `| ${r.threads} | ${r.chars} | ${r.masks} | ${fmt(c.tiankong.p50)} / ${fmt(c.tiankong.p95)} | ${fmt(c.transformers.p50)} / ${fmt(c.transformers.p95)}` +
        ` | ${fmt(c.native.p50)} / ${fmt(c.native.p95)} | ${c.tiankong.masks_filled} / ${c.transformers.masks_filled} / ${c.native.masks_filled}` +
        ` | **${r.speedup_vs_transformers.toFixed(2)}×** | ${perFilledMask(r).toFixed(2)}× | ${r.slowdown_vs_native.toFixed(2)}× | ${split(r)} |`,
    );
  }
  lines.push(
    '',
    '| threads | cold: first prediction ms (tiankong / transformers.js / native) | page memory MiB (tiankong / transformers.js) | tiankong cache hit p50 / p95 ms |',
    '|---|---|---|---|',
  );
  for (const t of report.per_threads) {
    const mib = (b) => (b / 2 ** 20).toFixed(0);
    lines.push(
      `| ${t.threads} | ${t.cold.tiankong.first_prediction_ms} / ${t.cold.transformers.first_prediction_ms} / ${t.cold.native.first_prediction_ms}` +
        ` | ${mib(t.memory.tiankong.bytes)} / ${mib(t.memory.transformers.bytes)} | ${t.cache_hit.p50} / ${t.cache_hit.p95} |`,
    );
  }
  if (report.tokenizers) {
    const t = report.tokenizers;
    lines.push(
      '',
      `Tokenizer, ${t.lines} corpus lines (${(t.bytes / 1e6).toFixed(2)} MB), one text per call unless noted, MB/s per wall second:`,
      '',
      '| tiankong wasm (browser) | transformers.js (browser) | HF tokenizers native, encode | HF tokenizers native, encodeBatch |',
      '|---|---|---|---|',
      `| ${t.tiankong_wasm_browser.mb_per_s.toFixed(2)} | ${t.transformers_js_browser.mb_per_s.toFixed(2)} | ${t.hf_tokenizers_native_encode.mb_per_s.toFixed(2)}` +
        ` | ${t.hf_tokenizers_native_encode_batch.mb_per_s.toFixed(2)} (${t.hf_tokenizers_native_encode_batch.rayon_threads} Rayon thread) |`,
      '',
      `Token counts ${t.token_counts_agree ? 'agree' : 'DIFFER'}: ${JSON.stringify(t.token_counts)}.`,
    );
  }
  lines.push(...companionMarkdown(report));
  return lines.join('\n') + '\n';
}

/** Replaces the text between the bench markers of `file` with `body`. */
function updateDoc(file, body) {
  const text = readFileSync(file, 'utf8');
  const start = '<!-- bench:start (written by npm run bench) -->';
  const end = '<!-- bench:end -->';
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) throw new Error(`${file} has no ${start} ... ${end} block`);
  writeFileSync(file, text.slice(0, i + start.length) + '\n' + body + text.slice(j));
}

/** Writes bench.json, bench.svg, prints the tables and (optionally) updates the doc. */
function writeReport(report, args) {
  const table = markdown(report);
  writeFileSync(join(args.outDir, 'bench.json'), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(
    join(args.outDir, 'bench.svg'),
    renderChart({
      rows: report.rows,
      title: `tiankong vs transformers.js vs native ONNX Runtime, bert-base-chinese INT8 (${report.machine.cpu_model}, ${report.machine.logical_cpus} CPUs, shared)`,
    }),
  );
  console.log(`\n${table}`);
  console.log(
    `wrote ${relative(process.cwd(), join(args.outDir, 'bench.json'))}, ${relative(process.cwd(), join(args.outDir, 'bench.svg'))}`,
  );
  if (args['update-doc']) {
    updateDoc(resolve(args['update-doc']), table);
    console.log(`updated ${args['update-doc']}`);
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  // Re-render the tables, chart and doc from a finished run's bench.json (no measuring).
  if (args['report-only']) return writeReport(JSON.parse(readFileSync(args['report-only'], 'utf8')), args);
  for (const dir of ['tiankong', 'transformers-js']) {
    if (!existsSync(join(args.models, dir, 'model.onnx')))
      throw new Error(`${join(args.models, dir)} has no model.onnx (run scripts/bench)`);
  }
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: the browser benchmark needs Debian's chromium`);
  const report = {
    benchmark: 'tiankong vs transformers.js vs onnxruntime-node, fill-mask latency',
    date: new Date().toISOString(),
    machine: machine(),
    runs: args.runs,
    warmup: args.warmup,
    top_k: TOP_K,
    shipped: relative(repoRoot, args.shipped),
    model: {
      description:
        'random-weight bert-base-chinese shape (12 layers × 768, vocab 21128), INT8 (per-channel int8 weights, ' +
        'dynamic uint8 activations), same checkpoint and quantization for all: for tiankong the core-graph export ' +
        `(${describeCore(join(args.models, 'tiankong'))}), ` +
        'for native the mask-only export (the whole network in ORT), for transformers.js the --full-logits export',
      tiankong: JSON.parse(readFileSync(join(args.models, 'tiankong', 'model.json'), 'utf8')).files['model.onnx'],
      transformers_js: JSON.parse(readFileSync(join(args.models, 'transformers-js', 'model.json'), 'utf8')).files[
        'model.onnx'
      ],
    },
    rows: [],
    per_threads: [],
  };
  console.log(
    `bench: ${report.machine.cpu_model}, ${report.machine.logical_cpus} CPUs, load average ${report.machine.load_average_at_start.join(' ')}`,
  );
  const groups = args.forms ? formGroups(args) : [];
  const sentences = benchSentences({
    corpusDir,
    lengths: [...new Set([...args.lengths, ...groups.flatMap((g) => g.lengths)])],
    maskCounts: [...new Set([1, ...args.masks])],
    count: args.warmup + args.runs + 1,
  });
  const served = [];
  const server = await startBenchServer(
    benchMounts({
      repoRoot,
      tiankongModelDir: join(args.models, 'tiankong'),
      transformersModelDir: join(args.models, 'transformers-js'),
      modelDirs: Object.assign({}, ...groups.map((g) => g.models)),
    }),
    { onRequest: ({ path, status }) => served.push({ path, status }) },
  );
  const browser = await launchBrowser();
  mkdirSync(args.outDir, { recursive: true });
  try {
    for (const [i, threads] of args.threads.entries()) {
      console.log(`latency, ${threads} thread${threads > 1 ? 's' : ''}:`);
      // Rows are saved as they come (bench.json says "partial": true until the run completes).
      const onRow = (row) => {
        report.rows.push(row);
        writeFileSync(join(args.outDir, 'bench.json'), JSON.stringify({ ...report, partial: true }, null, 2) + '\n');
      };
      await benchThreads({ args, browser, origin: server.origin, sentences, threads, flip: i % 2 === 1, onRow }).then(
        (result) =>
          report.per_threads.push({ threads, cold: result.cold, memory: result.memory, cache_hit: result.cacheHit }),
      );
    }
    report.forms = [];
    for (const group of groups) {
      for (const [i, threads] of args.threads.entries()) {
        console.log(`encoder forms, ${group.title}, ${threads} thread${threads > 1 ? 's' : ''}:`);
        report.forms.push(
          await benchForms({ args, browser, origin: server.origin, sentences, threads, group, flip: i % 2 === 1 }),
        );
      }
    }
    if (args.tokenizers) report.tokenizers = await benchTokenizers({ args, browser, origin: server.origin });
  } finally {
    await browser.close();
    await server.close();
  }
  // Offline proof: the browser (pages and Workers) requested nothing but this server.
  const local = (url) =>
    url.startsWith(server.origin + '/') || url.startsWith(`blob:${server.origin}/`) || url.startsWith('data:');
  const remote = browser.requests.filter((url) => !local(url));
  if (!browser.requests.some((u) => u.endsWith('/tjs-ort/ort-wasm-simd-threaded.asyncify.wasm'))) {
    throw new Error('the request log missed Worker requests: cannot prove the run was offline');
  }
  if (remote.length) throw new Error(`remote requests were made: ${remote.join(', ')}`);
  report.offline = { browser_requests: browser.requests.length, remote_requests: 0, served: served.length };
  console.log(`offline: ${browser.requests.length} browser requests, all to ${server.origin} (or blob:)`);
  if (args.app && existsSync(join(args.shipped, 'model.json'))) {
    console.log(`app: first and second visit, built with ${relative(repoRoot, args.shipped)}:`);
    const { measureAppVisits } = await import('./lib/app-visits.mjs');
    report.app_visits = await measureAppVisits({ repoRoot, modelDir: args.shipped, profiles: args.appProfiles });
  }
  if (args.phone && existsSync(join(args.shipped, 'model.json'))) {
    console.log('app on the phone profile (4x slower CPU, 9 Mbit/s, 150 ms, 390x844 touch):');
    const { measurePhoneVisits } = await import('./lib/app-visits.mjs');
    report.phone_visits = await measurePhoneVisits({ repoRoot, modelDir: args.shipped });
  }
  if (args.agreement) {
    console.log('agreement and output layer (Node):');
    report.companions = measureCompanions(args);
  }
  report.machine.load_average_at_end = loadavg().map((x) => +x.toFixed(2));

  writeReport(report, args);
}

main().catch((error) => {
  console.error(`bench: ${error.stack ?? error}`);
  process.exit(1);
});
