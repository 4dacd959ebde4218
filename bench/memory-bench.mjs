// Benchmark of the corpus memory (issue: memory.bin <= 10 MB, model + memory <= 20 MB, scoring +
// fusion <= 2 ms per mask in Chromium wasm, load <= 300 ms; browser memory growth reported).
// Prints numbers and writes JSON; asserts nothing.
//
// The same C++ core build the product ships (dist/core, single-threaded) runs in Node and in
// headless Chromium over the same inputs: held-out lines with one [MASK] each, their model logits
// computed once with onnxruntime-node. Per mask it times the decoder with the memory (candidates,
// evidence, fusion, softmax, top-k) and without it, side by side in one process; the difference
// is what the memory costs. Load = Memory construction from bytes already in memory (checksums,
// section checks), plus, in Chromium, fetching the file from the local server.
//
//   node bench/memory-bench.mjs [--model DIR] [--cases N] [--out FILE]
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../model/tooling/data-paths.mjs';
import { buildSuites } from '../model/tooling/eval-cases.mjs';
import { coreFusion, openEvaluator } from '../model/tooling/fill-eval.mjs';
import { launchBrowser } from './lib/browser.mjs';
import { startBenchServer } from './server.mjs';

const { values: args } = parseArgs({
  options: {
    model: { type: 'string', default: join(REPO_ROOT, 'model/default') },
    cases: { type: 'string', default: '300' },
    out: { type: 'string', default: join(REPO_ROOT, 'bench/results/memory.json') },
  },
});
const modelDir = resolve(args.model);
const manifest = JSON.parse(readFileSync(join(modelDir, 'model.json'), 'utf8'));
if (!manifest.memory) throw new Error(`${modelDir} has no memory (scripts/build-memory ${args.model})`);
const sizeOf = (file) => statSync(join(modelDir, file)).size;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];

// Inputs: held-out lines (val split) if present, else the examples of the app.
const ev = await openEvaluator(modelDir);
const suites = buildSuites(join(REPO_ROOT, '.cache/corpus'), 'val', Number(args.cases));
let texts = Object.entries(suites)
  .filter(([name]) => name.startsWith('held-out'))
  .flatMap(([, s]) => s.cases.map((c) => c.text));
if (!texts.length)
  texts = ['床前明月光，疑是地[MASK]霜。', '掩耳盗[MASK]', '中国的首都是北[MASK]。', '今天天气真[MASK]啊'];
texts = texts
  .filter((_, i) => i % Math.max(1, Math.floor(texts.length / Number(args.cases))) === 0)
  .slice(0, Number(args.cases));
const encodings = texts.map((t) => ev.encode(t)).filter(Boolean);
const rows = await ev.logits(encodings);
const cases = encodings.map((e, i) => ({
  ids: Array.from(e.ids),
  maskPositions: Array.from(e.maskPositions),
  logits: Array.from(rows[i]),
}));
ev.dispose();

/** The measurement itself, run in Node and (as source text) in the page: same code both places. */
async function measure(loadCore, vocabBytes, memoryBytes, manifest, cases, coreFusionOptions, heapBytes) {
  const now = () => performance.now();
  const core = await loadCore({ variant: 'single' });
  const module = core.module;
  const t = manifest.tokenizer;
  const tokenizer = new module.Tokenizer(vocabBytes, {
    cleanText: t.clean_text,
    handleChineseChars: t.handle_chinese_chars,
    stripAccents: t.strip_accents,
    lowercase: t.lowercase,
    maxInputCharsPerWord: 100,
    maxLength: manifest.max_length,
  });
  const heapBefore = heapBytes(module);
  const loads = [];
  let memory = null;
  for (let i = 0; i < 5; i++) {
    memory?.delete();
    const start = now();
    // A split memory: both parts (memoryBytes = [memory.bin, memory-ngrams.bin]).
    memory = new module.Memory(memoryBytes[0], tokenizer, ...memoryBytes.slice(1));
    loads.push(now() - start);
  }
  const heapAfter = heapBytes(module);
  const base = { topK: 5, threshold: 0, excludeSpecial: true, excludeSubwords: true };
  const plain = new module.Decoder(tokenizer, base);
  const fused = new module.Decoder(tokenizer, { ...base, memory, fusion: coreFusionOptions });
  const vocab = tokenizer.vocabSize();
  const inputs = cases.map((c) => ({
    ids: Int32Array.from(c.ids),
    masks: Int32Array.from(c.maskPositions),
    logits: Float32Array.from(c.logits),
  }));
  const withMemory = [],
    without = [];
  for (let round = 0; round < 3; round++) {
    for (const input of inputs) {
      let start = now();
      fused.decode(input.logits, 1, vocab, input.ids, input.masks);
      const a = now() - start;
      start = now();
      plain.decode(input.logits, 1, vocab, undefined, undefined);
      const b = now() - start;
      if (round > 0) {
        withMemory.push(a);
        without.push(b);
      } // round 0 warms the JIT
    }
  }
  fused.delete();
  plain.delete();
  memory.delete();
  tokenizer.delete();
  core.dispose();
  return { loads, withMemory, without, heapGrowthBytes: heapAfter - heapBefore, heapBytes: heapAfter };
}

const coreFusionOptions = coreFusion(manifest.memory.fusion);
const vocabBytes = new Uint8Array(readFileSync(join(modelDir, manifest.tokenizer.vocab)));
const memoryFiles = [manifest.memory.file, ...(manifest.memory.ngrams ? [manifest.memory.ngrams] : [])];
const memoryBytes = memoryFiles.map((file) => new Uint8Array(readFileSync(join(modelDir, file))));
const { loadCore } = await import(join(REPO_ROOT, 'dist/core/load-core.js'));
const nodeResult = await measure(loadCore, vocabBytes, memoryBytes, manifest, cases, coreFusionOptions, (m) =>
  m.heapBytes(),
);

// Chromium: the same function in a page, the files fetched from a local server.
const work = mkdtempSync(join(tmpdir(), 'tiankong-memory-bench-'));
let browserResult;
try {
  writeFileSync(join(work, 'cases.json'), JSON.stringify({ cases, manifest, fusion: manifest.memory.fusion }));
  writeFileSync(
    join(work, 'index.html'),
    `<!doctype html><meta charset="utf-8"><script type="module">
    const measure = ${measure.toString()};
    window.run = async () => {
      const { loadCore } = await import('/dist/core/load-core.js');
      const { cases, manifest, fusion } = await (await fetch('/bench-data/cases.json')).json();
      const fetchStart = performance.now();
      const memoryFiles = [manifest.memory.file, ...(manifest.memory.ngrams ? [manifest.memory.ngrams] : [])];
      const memoryBytes = await Promise.all(memoryFiles.map(async (file) =>
        new Uint8Array(await (await fetch('/model/' + file)).arrayBuffer())));
      const fetchMs = performance.now() - fetchStart;
      const vocabBytes = new Uint8Array(await (await fetch('/model/' + manifest.tokenizer.vocab)).arrayBuffer());
      const core = { model: fusion.model ?? 1, unigram: fusion.unigram ?? 0, ngram: Float32Array.from(fusion.ngram),
        hitBase: fusion.hit_base, hitPerToken: fusion.hit_per_token, hitWhole: fusion.hit_whole,
        minHitStrength: fusion.min_hit_strength, modelCandidates: fusion.model_candidates };
      const jsBefore = performance.memory?.usedJSHeapSize ?? 0;
      const result = await measure(loadCore, vocabBytes, memoryBytes, manifest, cases, core, (m) => m.heapBytes());
      return { ...result, fetchMs, jsHeapDeltaBytes: (performance.memory?.usedJSHeapSize ?? 0) - jsBefore,
        userAgent: navigator.userAgent };
    };
    window.ready = true;
  </script>`,
  );
  const server = await startBenchServer({
    '/dist/': join(REPO_ROOT, 'dist'),
    '/bench-data/': work,
    '/model/': modelDir,
  });
  const browser = await launchBrowser();
  try {
    const page = await browser.context.newPage();
    await page.goto(`${server.origin}/bench-data/index.html`);
    await page.waitForFunction(() => window.ready === true);
    browserResult = await page.evaluate(() => window.run());
  } finally {
    await browser.close();
    await server.close();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const summary = (r) => ({
  load_ms: { median: median(r.loads), first: r.loads[0] },
  decode_with_memory_ms: { median: median(r.withMemory), p95: percentile(r.withMemory, 0.95) },
  decode_without_ms: { median: median(r.without), p95: percentile(r.without, 0.95) },
  memory_cost_per_mask_ms: {
    median: median(r.withMemory) - median(r.without),
    p95: percentile(r.withMemory, 0.95) - percentile(r.without, 0.95),
  },
  wasm_heap_growth_bytes: r.heapGrowthBytes,
  wasm_heap_bytes_with_memory: r.heapBytes,
});
const result = {
  what:
    'corpus memory: file sizes, load time, scoring + fusion time per mask (decoder with the memory minus without), ' +
    'wasm heap growth; dist/core single-threaded build; same inputs in Node and headless Chromium',
  model: relative(REPO_ROOT, modelDir),
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, loadavg: loadavg().map((x) => Number(x.toFixed(2))) },
  sizes: {
    memory_bytes: sizeOf(manifest.memory.file),
    // The model's own files: the graph, and a core model's output layer (head.bin).
    model_bytes: sizeOf('model.onnx') + (manifest.head ? sizeOf(manifest.head.file) : 0),
    model_plus_memory_bytes:
      sizeOf(manifest.memory.file) +
      sizeOf('model.onnx') +
      (manifest.head ? sizeOf(manifest.head.file) : 0) +
      sizeOf(manifest.tokenizer.vocab),
  },
  cases: cases.length,
  node: summary(nodeResult),
  chromium: browserResult && {
    ...summary(browserResult),
    fetch_ms: browserResult.fetchMs,
    js_heap_growth_bytes: browserResult.jsHeapDeltaBytes,
    user_agent: browserResult.userAgent,
  },
};
const mb = (b) => `${(b / 1e6).toFixed(2)} MB`;
const ms = (x) => `${x.toFixed(3)} ms`;
console.log(
  `memory.bin ${mb(result.sizes.memory_bytes)}; model (graph + head) + vocab + memory ${mb(result.sizes.model_plus_memory_bytes)}`,
);
for (const where of ['node', 'chromium']) {
  const r = result[where];
  if (!r) continue;
  console.log(
    `${where}: load ${ms(r.load_ms.median)} (first ${ms(r.load_ms.first)})${r.fetch_ms !== undefined ? `, fetch ${ms(r.fetch_ms)}` : ''}; ` +
      `decode per mask ${ms(r.decode_with_memory_ms.median)} with memory vs ${ms(r.decode_without_ms.median)} without ` +
      `(memory costs ${ms(r.memory_cost_per_mask_ms.median)}, p95 ${ms(r.memory_cost_per_mask_ms.p95)}); ` +
      `wasm heap +${mb(r.wasm_heap_growth_bytes)} (${mb(r.wasm_heap_bytes_with_memory)} with the memory loaded)`,
  );
}
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, `${JSON.stringify(result, null, 2)}\n`);
console.error(`memory-bench: wrote ${args.out}`);
