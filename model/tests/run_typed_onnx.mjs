// Runs ONNX models on typed feeds (float32 / int32 / int64) given as JSON on stdin and prints every
// output as JSON, or the error a runtime gave: the bridge test_lean_graph.py uses to check that a
// contrib operator runs in onnxruntime-node and in onnxruntime-web's wasm build (run-onnx.mjs
// only feeds int64 ids and inputs_embeds). One process per runtime and thread count, because
// onnxruntime-web's thread count is fixed per process.
// stdin:  {"runtime": "node"|"web", "threads": n,
//          "models": [{"path": p, "feeds": {name: {"dtype": "float32", "dims": [...], "data": [...]}}}]}
// stdout: {"results": [{"outputs": {name: {"dims": [...], "data": [...]}}} | {"error": message}]}
import { readFileSync } from 'node:fs';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const ort = request.runtime === 'web' ? await import('onnxruntime-web') : await import('onnxruntime-node');
const options = { graphOptimizationLevel: 'all', executionProviders: [request.runtime === 'web' ? 'wasm' : 'cpu'] };
if (request.runtime === 'web') ort.env.wasm.numThreads = request.threads ?? 1;
else Object.assign(options, { intraOpNumThreads: request.threads ?? 1, interOpNumThreads: 1 });
const ARRAYS = {
  float32: (d) => Float32Array.from(d),
  int32: (d) => Int32Array.from(d),
  int64: (d) => BigInt64Array.from(d, (v) => BigInt(v)),
};

const results = [];
for (const model of request.models) {
  try {
    const session = await ort.InferenceSession.create(new Uint8Array(readFileSync(model.path)), options);
    const feeds = {};
    for (const [name, { dtype, dims, data }] of Object.entries(model.feeds)) {
      feeds[name] = new ort.Tensor(dtype, ARRAYS[dtype](data), dims);
    }
    const outputs = {};
    for (const [name, tensor] of Object.entries(await session.run(feeds))) {
      outputs[name] = { dims: tensor.dims.map(Number), data: Array.from(tensor.data, Number) };
    }
    await session.release();
    results.push({ outputs });
  } catch (error) {
    results.push({ error: String(error?.message ?? error).slice(0, 600) });
  }
}
// Exit once stdout is flushed: onnxruntime-web's thread pool would keep the process alive.
process.stdout.write(JSON.stringify({ results }), () => process.exit(0));
