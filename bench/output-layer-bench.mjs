// Benchmark of the C++ core's output layer (head.bin): the vocabulary projection of one mask's
// hidden state (int8 table x int16-quantised hidden, SIMD128 dot_i16x8; or the float32 table, which
// an f16 head.bin becomes at load) and the input embedding gather, for the default model's shape
// and bert-base-chinese's, in Node and headless Chromium (the single-threaded dist/core build the
// product loads). Prints numbers and writes JSON.
//
//   node bench/output-layer-bench.mjs [--out FILE]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { crc32 } from 'node:zlib';
import { REPO_ROOT } from '../model/tooling/data-paths.mjs';
import { launchBrowser } from './lib/browser.mjs';
import { startBenchServer } from './server.mjs';

const { values: args } = parseArgs({
  options: { out: { type: 'string', default: join(REPO_ROOT, 'bench/results/output-layer.json') } },
});
// name → [vocab, hidden, head.bin dtype: 1 = int8 rows with a scale, 2 = float32 (what f16 becomes at load)]
const SHAPES = {
  'default model (10 358 x 224), int8 table': [10358, 224, 1],
  'default model (10 358 x 224), f32 table (= f16 head.bin)': [10358, 224, 2],
  'bert-base-chinese (21 128 x 768), int8 table': [21128, 768, 1],
  'bert-base-chinese (21 128 x 768), f32 table (= f16 head.bin)': [21128, 768, 2],
};

/** A random head.bin of table type `dtype` (1 int8, 2 float32) in the documented layout (wasm/src/output_layer.cc). */
function headBytes(vocab, hidden, dtype) {
  const int8 = dtype === 1;
  const stride = int8 ? Math.ceil(hidden / 16) * 16 : hidden;
  const tableBytes = vocab * stride * (int8 ? 1 : 4);
  const bytes = new Uint8Array(32 + tableBytes + (int8 ? 8 : 4) * vocab);
  bytes.set(new TextEncoder().encode('TKOUTPUT'));
  const view = new DataView(bytes.buffer);
  [1, dtype, vocab, hidden, stride].forEach((v, i) => view.setUint32(8 + 4 * i, v, true));
  let seed = 1;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / (1 << 24);
  for (let v = 0; v < vocab; v++) {
    for (let k = 0; k < hidden; k++) {
      if (int8) view.setInt8(32 + v * stride + k, Math.round((random() - 0.5) * 200));
      else view.setFloat32(32 + 4 * (v * stride + k), (random() - 0.5) * 0.1, true);
    }
  }
  // int8: scale[V] then bias[V]; f32: bias[V]
  for (let v = 0; v < vocab * (int8 ? 2 : 1); v++) view.setFloat32(32 + tableBytes + 4 * v, 0.01, true);
  view.setUint32(28, crc32(bytes.subarray(32)), true);
  return bytes;
}

/** Runs in Node and (as source) in the page. */
async function measure(loadCore, shapes, makeHead) {
  const core = await loadCore({ variant: 'single' });
  const out = {};
  for (const [name, [vocab, hidden, dtype]] of Object.entries(shapes)) {
    const layer = new core.module.OutputLayer(makeHead(vocab, hidden, dtype), vocab);
    const hiddenRow = Float32Array.from({ length: hidden }, (_, i) => Math.sin(i));
    const ids = Int32Array.from({ length: 32 }, (_, i) => (i * 97) % vocab);
    const time = (fn, n) => {
      for (let i = 0; i < 3; i++) fn();
      const samples = [];
      for (let r = 0; r < 9; r++) {
        const start = performance.now();
        for (let i = 0; i < n; i++) fn();
        samples.push((performance.now() - start) / n);
      }
      return samples.sort((a, b) => a - b)[4];
    };
    out[name] = {
      logits_ms_per_mask: time(() => layer.logits(hiddenRow, 1), 20),
      embed_ms_per_32_tokens: time(() => layer.embed(ids), 200),
      table_bytes: dtype === 1 ? vocab * Math.ceil(hidden / 16) * 16 : vocab * hidden * 4,
    };
    layer.delete();
  }
  core.dispose();
  return out;
}

const { loadCore } = await import(join(REPO_ROOT, 'dist/core/load-core.js'));
const node = await measure(loadCore, SHAPES, headBytes);
const work = mkdtempSync(join(tmpdir(), 'tiankong-head-bench-'));
let chromium;
try {
  writeFileSync(
    join(work, 'index.html'),
    `<!doctype html><meta charset="utf-8"><script type="module">
    const measure = ${measure.toString()};
    const crc32 = (b) => { let c = ~0; for (const x of b) { c ^= x; for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1; } return ~c >>> 0; };
    const headBytes = ${headBytes.toString().replace('crc32(bytes', 'crc32(bytes')};
    window.run = async () => measure((await import('/dist/core/load-core.js')).loadCore, ${JSON.stringify(SHAPES)}, headBytes);
    window.ready = true;
  </script>`,
  );
  const server = await startBenchServer({ '/dist/': join(REPO_ROOT, 'dist'), '/bench-data/': work });
  const browser = await launchBrowser();
  try {
    const page = await browser.context.newPage();
    await page.goto(`${server.origin}/bench-data/index.html`);
    await page.waitForFunction(() => window.ready === true);
    chromium = await page.evaluate(() => window.run());
  } finally {
    await browser.close();
    await server.close();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
const result = {
  what: 'C++ output layer (int8 table with int16-quantised hidden, wasm SIMD128 i32x4.dot_i16x8_s; float32 table, which an f16 head.bin is converted to at load): vocabulary projection per mask and input-embedding gather; dist/core single-threaded build',
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, loadavg: loadavg().map((x) => +x.toFixed(2)) },
  node,
  chromium,
};
for (const [where, r] of [
  ['node', node],
  ['chromium', chromium],
]) {
  for (const [shape, m] of Object.entries(r)) {
    console.log(
      `${where} ${shape}: logits ${m.logits_ms_per_mask.toFixed(3)} ms/mask, embed ${m.embed_ms_per_32_tokens.toFixed(4)} ms/32 tokens`,
    );
  }
}
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, `${JSON.stringify(result, null, 2)}\n`);
console.error(`output-layer-bench: wrote ${args.out}`);
