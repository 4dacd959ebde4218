/**
 * Node only: picks the inference runtime. Measured with tests/runtime/bench-node-backends.mjs
 * (bench/results/node-backends.json): onnxruntime-node (native CPU) runs the INT8 model 2.5–3×
 * faster than onnxruntime-web's wasm build at equal threads on a bert-base-size model, loads no
 * 14 MB wasm, and lets the process exit at once (V8 keeps compiling ORT's wasm in the background
 * for seconds). So 'auto' uses it when installed (optional peer dependency) and falls back to
 * onnxruntime-web, which is always installed.
 */
import { availableParallelism } from 'node:os';
import { TiankongError } from './errors.js';
import { type InferenceRuntime, type OrtModule, defaultThreads } from './runtime.js';
import type { Backend } from './types.js';

/** onnxruntime-web's wasm thread count is per process, fixed when its first session starts. */
let webThreadsInProcess: number | undefined;

export async function createNodeRuntime(backend: Backend = 'auto', threads?: number): Promise<InferenceRuntime> {
  if (!['auto', 'wasm', 'webgpu'].includes(backend)) {
    throw new TiankongError('BAD_OPTION', `tiankong: backend must be 'auto', 'wasm' or 'webgpu', got ${JSON.stringify(backend)}`);
  }
  if (threads !== undefined && (!Number.isInteger(threads) || threads < 1)) {
    throw new TiankongError('BAD_OPTION', `tiankong: threads must be a positive integer, got ${threads}`);
  }
  const cores = availableParallelism();
  const count = threads ?? defaultThreads(cores);
  const threadsReason = threads === undefined ? `default: min(4, ${cores} CPUs)` : 'requested';
  if (backend === 'auto') {
    const native = await import('onnxruntime-node').catch(() => null);
    if (native) {
      return {
        ort: native as unknown as OrtModule, backend: 'native', threads: count, threadsReason,
        backendReason: 'onnxruntime-node is installed (native CPU, faster than wasm in Node)',
        sessionOptions: { executionProviders: ['cpu'], graphOptimizationLevel: 'all', intraOpNumThreads: count, interOpNumThreads: 1 },
      };
    }
  }
  const backendReason = backend === 'wasm' ? 'requested'
    : backend === 'webgpu' ? 'WebGPU is not available in Node.js: using onnxruntime-web (wasm)'
      : 'onnxruntime-node is not installed (npm install onnxruntime-node for faster inference): using onnxruntime-web (wasm)';
  // The package's "node" export of onnxruntime-web: its wasm backend set up for Node.
  const web = await import('onnxruntime-web');
  webThreadsInProcess ??= web.env.wasm.numThreads = count;
  return {
    ort: web as unknown as OrtModule, backend: 'wasm', backendReason,
    threads: webThreadsInProcess,
    threadsReason: webThreadsInProcess === count ? threadsReason
      : `onnxruntime-web's thread count is per process and was fixed at ${webThreadsInProcess} by the first model`,
    sessionOptions: { executionProviders: ['wasm'], graphOptimizationLevel: 'all' },
  };
}
