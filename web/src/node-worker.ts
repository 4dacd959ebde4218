/**
 * The Node entry's worker thread (worker_threads; started by index.ts): owns the C++ core, the
 * model and the ONNX Runtime session (onnxruntime-node or onnxruntime-web), so tokenizing,
 * inference and decoding never run on the caller's thread and its event loop stays free. Speaks
 * browser/protocol.ts through browser/host.ts, as the browser's Worker does (worker.ts). One model
 * per thread at a time.
 *
 * The exit guard: a thread torn down while onnxruntime-node is inside a call (a model run, a
 * session being created) aborts the whole process (the addon's N-API error escapes as a C++
 * exception). So every call into ONNX Runtime marks itself busy in a shared counter, and none
 * starts once the caller's thread has said it is ending the thread (index.ts waits for the count
 * to drop to zero first: at most the rest of one call).
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { serveEngine } from './browser/host.js';
import type { Request } from './browser/protocol.js';
import { type RunGuard, openNodeEngine } from './node.js';

/** [calls into ONNX Runtime in progress, 1 once the thread is being ended]. */
const exitGuard = (workerData as { exitGuard?: SharedArrayBuffer } | null)?.exitGuard;
const state = exitGuard ? new Int32Array(exitGuard) : null;

const guard: RunGuard = async (work) => {
  if (!state) return work();
  Atomics.add(state, 0, 1);
  if (Atomics.load(state, 1) !== 0) {
    Atomics.sub(state, 0, 1);
    Atomics.notify(state, 0);
    return new Promise<never>(() => undefined); // the thread is being ended: start nothing
  }
  try {
    return await work();
  } finally {
    Atomics.sub(state, 0, 1);
    Atomics.notify(state, 0);
  }
};

/**
 * Linux: this thread runs at a lower priority (nice + INFERENCE_NICENESS), and so do the inference
 * threads it starts (they inherit it), so that on a busy machine the caller's thread, the server's
 * event loop, gets a CPU first: 100 concurrent fills on 2 cores, p99 event-loop delay 4.8-5.8 →
 * 2.2-3.0 ms at equal throughput (RELIABILITY.md). Elsewhere (no per-thread nice) nothing changes.
 */
const INFERENCE_NICENESS = 10;
try {
  const thread = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(thread) && thread > 0) {
    setPriority(thread, Math.min(19, getPriority(thread) + INFERENCE_NICENESS));
  }
} catch {
  // Not Linux, or not allowed: the thread keeps the caller's priority.
}

const port = parentPort;
if (port) {
  const onRequest = serveEngine({
    post: (reply) => port.postMessage(reply),
    // The options crossed as plain data (index.ts); openNodeEngine checks them again.
    create: async ({ preview, ...options }, { signal, onProgress, onPreview }) =>
      (await openNodeEngine({ ...options, signal, onProgress }, guard, preview ? onPreview : undefined)).engine,
  });
  port.on('message', (request: Request) => void onRequest(request));
}
