// One way to open an ONNX model in either ONNX Runtime flavour from Node, so tests,
// validation and benchmarks compare the runtimes under identical settings:
//   'node' = onnxruntime-node (native CPU, the reference), 'web' = onnxruntime-web's
//   SIMD+threads wasm build (what the browser runs).
import { readFileSync } from 'node:fs';

/** @type {{node?: any, web?: any, webThreads?: number}} the loaded ORT modules, one per kind */
const runtimes = {};

async function loadRuntime(kind) {
  if (kind === 'node') return import('onnxruntime-node');
  if (kind === 'web') {
    // Under Node, 'onnxruntime-web' resolves (package "node" condition) to its Node build
    // of the same wasm backend (ort-wasm-simd-threaded.{mjs,wasm}, what 'onnxruntime-web/wasm'
    // runs in browsers). 'onnxruntime-web/wasm' itself has no Node condition: with threads
    // its browser bundle re-fetches its own script, and Node's fetch rejects file: URLs.
    return import('onnxruntime-web');
  }
  throw new Error(`unknown runtime '${kind}' (expected 'node' or 'web')`);
}

/**
 * Creates an inference session. The wasm thread count is process-wide in onnxruntime-web
 * and fixed by the first session, so all 'web' sessions of one process share `threads`.
 * @param {string} modelPath path to a .onnx file
 * @param {'node'|'web'} kind
 * @param {number} threads intra-op threads (set explicitly: the web default is 1 on 2 cores)
 * @param {object} [extraOptions] more session options (e.g. enableProfiling), merged last
 * @returns {Promise<SessionHandle>}
 */
export async function createSession(modelPath, kind, threads, extraOptions = {}) {
  runtimes[kind] ??= await loadRuntime(kind);
  const ort = runtimes[kind];
  if (kind === 'web') {
    if (runtimes.webThreads !== undefined && runtimes.webThreads !== threads) {
      throw new Error(`onnxruntime-web already runs with ${runtimes.webThreads} threads in this process`);
    }
    ort.env.wasm.numThreads = runtimes.webThreads = threads;
  }
  const options = { graphOptimizationLevel: 'all', executionProviders: [kind === 'web' ? 'wasm' : 'cpu'] };
  if (kind === 'node') Object.assign(options, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  Object.assign(options, extraOptions);
  const session = await ort.InferenceSession.create(new Uint8Array(readFileSync(modelPath)), options);
  return { session, ort, kind, threads };
}

/**
 * @typedef {object} SessionHandle
 * @property {any} session the ORT InferenceSession (its `inputNames` name the graph's inputs)
 * @property {any} ort the ORT module it came from
 * @property {'node'|'web'} kind
 * @property {number} threads
 */

/**
 * Builds an int64 tensor from an array of rows (numbers).
 * @param {any} ort
 * @param {number[][]} rows
 */
export function int64Tensor(ort, rows) {
  const data = BigInt64Array.from(rows.flat(), (v) => BigInt(v));
  return new ort.Tensor('int64', data, [rows.length, rows[0].length]);
}

/** A float32 tensor from nested arrays (e.g. inputs_embeds [batch][sequence][hidden]). */
function float32Tensor(ort, nested) {
  const dims = [];
  for (let level = nested; Array.isArray(level); level = level[0]) dims.push(level.length);
  return new ort.Tensor('float32', Float32Array.from(nested.flat(Infinity)), dims);
}

/**
 * Runs one batch. `feeds` maps input names to arrays of rows; inputs the model does not
 * declare are left out (e.g. token_type_ids for a graph without it). `inputs_embeds` (the
 * "core" export) is float32, every other input int64.
 * @param {SessionHandle} handle
 * @param {Record<string, number[][]>} feeds
 * @returns {Promise<{dims: number[], data: Float32Array}>} the graph's output (`logits`, or
 *   `hidden` for the "core" export)
 */
export async function runLogits({ session, ort }, feeds) {
  const tensors = {};
  for (const name of session.inputNames) {
    if (!(name in feeds)) throw new Error(`model input '${name}' has no feed (have: ${Object.keys(feeds)})`);
    tensors[name] = name === 'inputs_embeds' ? float32Tensor(ort, feeds[name]) : int64Tensor(ort, feeds[name]);
  }
  const outputs = await session.run(tensors);
  const output = outputs.logits ?? outputs.hidden;
  return { dims: output.dims.map(Number), data: output.data };
}
