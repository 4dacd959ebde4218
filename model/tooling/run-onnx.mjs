// Runs an ONNX model on int64 feeds given as JSON on stdin and prints the logits as JSON:
// the bridge Python tests use to compare onnxruntime against PyTorch (no onnxruntime
// Python package on this machine): model/tests/conftest.py, scripts/make-test-model.
// usage: node model/tooling/run-onnx.mjs < REQUEST_JSON
// stdin:  {"model": path, "runtime": "node"|"web", "threads": n, "batches": [{name: [[...], ...]}, ...]}
// stdout: {"inputs": [...], "results": [{"dims": [...], "data": [...]}, ...]}
import { createSession, runLogits } from './ort-session.mjs';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const handle = await createSession(request.model, request.runtime ?? 'node', request.threads ?? 1);
const results = [];
for (const feeds of request.batches) {
  const { dims, data } = await runLogits(handle, feeds);
  results.push({ dims, data: Array.from(data) });
}
// Exit once stdout is flushed: onnxruntime-web's thread pool would keep the process alive.
process.stdout.write(JSON.stringify({ inputs: handle.session.inputNames, results }), () => process.exit(0));
