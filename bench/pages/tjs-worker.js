// transformers.js in a dedicated module Worker, as its docs recommend for apps (and so it runs
// off the main thread exactly like tiankong's Worker): fully offline — local model files only,
// its own onnxruntime-web wasm from this server. Protocol: {id, type, ...} -> {id, value | error}.
import { env, pipeline } from '/tjs/transformers.min.js';

env.allowRemoteModels = false;
env.allowLocalModels = true;
env.localModelPath = '/models/tjs/';
// transformers.js defaults to the "asyncify" build of its onnxruntime-web on a CDN; same build, served locally.
env.backends.onnx.wasm.wasmPaths = {
  mjs: '/tjs-ort/ort-wasm-simd-threaded.asyncify.mjs',
  wasm: '/tjs-ort/ort-wasm-simd-threaded.asyncify.wasm',
};

let fillMask = null;

async function handle(message) {
  if (message.type === 'load') {
    env.backends.onnx.wasm.numThreads = message.threads;
    // dtype q8 = onnx/model_quantized.onnx, transformers.js's default on wasm: our INT8 --full-logits export.
    fillMask = await pipeline('fill-mask', 'bert-bench', { dtype: 'q8', device: 'wasm' });
    return { ortVersion: env.backends.onnx.versions?.web, threads: env.backends.onnx.wasm.numThreads };
  }
  if (message.type === 'fill') {
    const out = await fillMask(message.text, { top_k: message.topK });
    // One text in -> the candidates of its first [MASK] only (transformers.js ignores further masks).
    const perMask = Array.isArray(out[0]) ? out : [out];
    return { filled: perMask.length, top1: perMask[0][0].token_str };
  }
  if (message.type === 'dispose') {
    await fillMask?.dispose();
    fillMask = null;
    return null;
  }
  throw new Error(`unknown request ${message.type}`);
}

self.onmessage = async ({ data }) => {
  try {
    self.postMessage({ id: data.id, value: await handle(data) });
  } catch (error) {
    self.postMessage({ id: data.id, error: String(error?.stack ?? error) });
  }
};
