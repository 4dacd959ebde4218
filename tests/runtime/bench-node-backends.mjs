#!/usr/bin/env node
// Benchmark behind the Node backend choice (web/src/node.ts: createNodeRuntime): the same model through
// the built package with onnxruntime-web's wasm backend and with onnxruntime-node, equal threads,
// result cache off. Prints a table and writes bench/results/node-backends.json.
//   node tests/runtime/bench-node-backends.mjs [--threads N] [--runs N] MODEL_DIR ...
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { createFillMask } = await import(join(root, 'dist', 'index.js'));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { threads: { type: 'string', default: '2' }, runs: { type: 'string', default: '20' } },
});
const threads = Number(values.threads);
const runs = Number(values.runs);
if (positionals.length === 0) {
  console.error('usage: bench-node-backends.mjs [--threads N] [--runs N] MODEL_DIR ...');
  process.exit(2);
}

const CHARS = '春夏秋冬风花雪月山水天地人心日星云雨江河';
/** A text of about `tokens` tokens with one mask; `variant` changes one character so nothing repeats. */
const text = (tokens, variant) => {
  let s = '';
  for (let i = 0; i < tokens - 3; i++) s += CHARS[(i * 7 + variant * (i === 0 ? 1 : 0)) % CHARS.length];
  return `${s.slice(0, s.length >> 1)}[MASK]${s.slice(s.length >> 1)}`;
};
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

const results = [];
for (const model of positionals) {
  for (const backend of ['wasm', 'auto']) {
    const started = performance.now();
    const tk = await createFillMask({ model, backend, threads, cache: { maxEntries: 0, maxBytes: 0 } });
    const loadMs = performance.now() - started;
    const stats = tk.stats();
    const firstStarted = performance.now();
    await tk.fill(text(16, 999));
    const firstFillMs = performance.now() - firstStarted;
    for (const seq of [16, 64, 128]) {
      for (let i = 0; i < 3; i++) await tk.fill(text(seq, 100 + i)); // warm-up
      const total = [],
        inference = [];
      for (let i = 0; i < runs; i++) {
        const r = await tk.fill(text(seq, i));
        total.push(r.timings.totalMs);
        inference.push(r.timings.inferenceMs);
      }
      const row = {
        model: stats.model.name,
        vocab: stats.model.vocabSize,
        backend: stats.backend,
        threads: stats.threads,
        seq,
        loadMs: Math.round(loadMs),
        firstFillMs: Math.round(firstFillMs),
        medianMs: +quantile(total, 0.5).toFixed(2),
        p95Ms: +quantile(total, 0.95).toFixed(2),
        inferenceMedianMs: +quantile(inference, 0.5).toFixed(2),
      };
      results.push(row);
      console.log(Object.values(row).join('\t'));
    }
    await tk.dispose();
  }
}
const out = join(root, 'bench', 'results', 'node-backends.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  JSON.stringify({ date: new Date().toISOString(), node: process.version, runs, results }, null, 2) + '\n',
);
console.log(`wrote ${out}`);
