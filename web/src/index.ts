/**
 * tiankong (填空): Chinese fill-in-the-blank with a BERT masked-language model, in Node and
 * in browsers. This is the Node entry: the model runs in a worker thread (node-worker.ts), so the
 * caller's event loop stays free while it fills; bundlers pick the browser entry
 * (`tiankong/browser`, same API, the model runs in a Worker) through the "browser" export
 * condition. Both entries put the same proxy (browser/proxy.ts) in front of the same protocol.
 *
 * @example
 * ```ts
 * import { createFillMask } from 'tiankong';
 * const tk = await createFillMask({ model: './model/default' });
 * const { masks } = await tk.fill('春眠不觉晓，处处闻啼[MASK]。', { topK: 3 });
 * for (const c of masks[0].candidates) console.log(c.token, c.score.toFixed(3), c.sequence);
 * await tk.dispose();
 * ```
 * @packageDocumentation
 */
import { Worker } from 'node:worker_threads';
import { WorkerClient } from './browser/client.js';
import type { Reply, WireCreateOptions } from './browser/protocol.js';
import { proxyModel, proxyPreview } from './browser/proxy.js';
import { checkCreateOptions } from './engine/options.js';
import { TiankongError, describe, throwIfAborted } from './errors.js';
import { isModelBytes } from './model/bytes.js';
import type { CreateFillMaskOptions, FillMaskModel } from './types.js';

export { TiankongError } from './errors.js';
export type * from './types.js';
export { createTokenizer, type Tokenized, type TokenizerHandle, type TokenizerSettings } from './tokenize.js';
export { DEFAULT_MODEL_DIR } from './node.js';

/**
 * Loads a model and returns a {@link FillMaskModel}. Rejects with a {@link TiankongError}
 * (BAD_MODEL, INTEGRITY, NETWORK, BAD_OPTION, ABORTED) that says what to fix.
 *
 * @example
 * ```ts
 * const tk = await createFillMask({ model: 'model/default', threads: 2, onProgress: (p) => console.log(p.file, p.loaded) });
 * console.log(tk.stats().backend); // 'native' with onnxruntime-node installed, else 'wasm'
 * ```
 */
export async function createFillMask(options: CreateFillMaskOptions = {}): Promise<FillMaskModel> {
  const settings = checkCreateOptions(options); // here: onProgress and signal stay on this thread
  throwIfAborted(options.signal);
  const client = startWorker(`${settings.backend}|${settings.threads ?? 'default'}`);
  const wire: WireCreateOptions = {
    model: wireModel(options.model),
    threads: settings.threads,
    backend: settings.backend,
    cache: settings.cache,
    memory: settings.memory,
    preview: options.onPreview !== undefined,
  };
  const { onPreview } = options;
  try {
    await client.request(
      { type: 'create', options: wire },
      {
        signal: options.signal,
        onProgress: options.onProgress,
        ...(onPreview ? { onPreview: () => onPreview(proxyPreview(client)) } : {}),
      },
    );
  } catch (error) {
    await client.fail(error as TiankongError);
    throw error;
  }
  return proxyModel(client);
}

/** The model argument as plain data: a path or URL string (URL objects do not cross), or the bytes (copied). */
function wireModel(model: CreateFillMaskOptions['model']): WireCreateOptions['model'] {
  if (model instanceof URL) return model.href;
  if (isModelBytes(model)) {
    const { modelBytes, vocabBytes, memoryBytes, headBytes, manifest } = model;
    return {
      modelBytes,
      vocabBytes,
      manifest,
      ...(memoryBytes === undefined ? {} : { memoryBytes }),
      ...(headBytes === undefined ? {} : { headBytes }),
    };
  }
  return model as string; // a path or a URL string (undefined: the packaged default model)
}

/** Options about the main script (`node --input-type=module -e …`), which a worker given a file rejects. */
const MAIN_SCRIPT_OPTIONS = new Set(['-e', '--eval', '-p', '--print', '--input-type']);

/** The caller's Node options (loaders, conditions, flags), for the worker thread too, less MAIN_SCRIPT_OPTIONS. */
function workerExecArgv(): string[] {
  const kept: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const [name] = argv[i]!.split('=', 1);
    if (!MAIN_SCRIPT_OPTIONS.has(name!)) kept.push(argv[i]!);
    else if (!argv[i]!.includes('=')) i++; // its value is the next argument
  }
  return kept;
}

/**
 * Threads whose model was disposed, by the runtime settings they were started with, kept (idle,
 * unreferenced) for the next createFillMask of the same kind: their module graph and runtime are
 * loaded (onnxruntime-web compiles a 14 MB wasm per thread, seconds on a small machine).
 */
const parked = new Map<string, { worker: Worker; guard: Int32Array; listening: Listeners }>();
const MAX_PARKED = 2;

/**
 * The worker thread and its client: a parked thread of this `kind`, or a new one. The thread is
 * referenced (keeps the process alive) only while a request is pending, so a caller that forgets
 * dispose() does not hang the process; its failure (a crash, an unexpected exit) fails every
 * pending and later request.
 */
function startWorker(kind: string): WorkerClient {
  const waiting = parked.get(kind);
  parked.delete(kind);
  if (waiting) stopListening(waiting.worker, waiting.listening);
  let thread: Worker;
  const guard = waiting?.guard ?? new Int32Array(new SharedArrayBuffer(8));
  try {
    thread =
      waiting?.worker ??
      new Worker(new URL('./node-worker.js', import.meta.url), {
        name: 'tiankong',
        execArgv: workerExecArgv(),
        workerData: { exitGuard: guard.buffer },
      });
  } catch (error) {
    throw new TiankongError('UNSUPPORTED', `tiankong: cannot start the inference thread: ${describe(error)}`);
  }
  if (!waiting) guardOnExit(thread, guard);
  const client = new WorkerClient({
    postMessage: (message, transfer) => thread.postMessage(message, transfer as ArrayBuffer[]),
    terminate: async () => {
      await quiet(guard);
      return thread.terminate();
    },
    busy: (busy) => (busy ? thread.ref() : thread.unref()),
    release: () => park(kind, thread, guard, listening),
  });
  const failed = (why: string) =>
    void client.fail(new TiankongError('UNSUPPORTED', `tiankong: the inference thread ${why}`));
  const listening = listen(thread, {
    message: (reply: Reply) => client.receive(reply),
    error: (error: Error) => failed(`failed: ${describe(error)}`),
    messageerror: (error: Error) => failed(`sent a message that cannot be read: ${describe(error)}`),
    exit: (code: number) => failed(`exited (code ${code})`),
  });
  return client;
}

type Listeners = Partial<Record<'message' | 'error' | 'messageerror' | 'exit', (value: any) => void>>;

/** Adds `listeners` to the worker (only these are removed again: Node's own listeners stay). */
function listen(worker: Worker, listeners: Listeners): Listeners {
  for (const [event, listener] of Object.entries(listeners)) worker.on(event, listener);
  return listeners;
}

function stopListening(worker: Worker, listeners: Listeners): void {
  for (const [event, listener] of Object.entries(listeners)) worker.off(event, listener);
}

/** Keeps a thread whose model was disposed (see `parked`), or ends it when one of its kind waits already. */
function park(kind: string, worker: Worker, guard: Int32Array, listening: Listeners): void {
  stopListening(worker, listening);
  worker.unref();
  if (parked.has(kind) || parked.size >= MAX_PARKED) {
    void quiet(guard).then(() => worker.terminate());
    return;
  }
  const forget = () => {
    if (parked.get(kind)?.worker === worker) parked.delete(kind);
  };
  // Late replies of its last model are dropped (no 'message' listener); an error ends it.
  parked.set(kind, { worker, guard, listening: listen(worker, { error: forget, exit: forget }) });
}

/**
 * The exit guard of each live thread (node-worker.ts): a thread ended while onnxruntime-node is
 * inside a call aborts the process, so before a thread is ended — by terminate(), or by the
 * process exiting (process.exit(), the end of the program) — it is told to start no more calls
 * and the ending waits for the call in progress (at most the rest of one model run; 10 s at most).
 */
const guarded = new Map<Worker, Int32Array>();
const MAX_EXIT_WAIT_MS = 10_000;

function guardOnExit(worker: Worker, guard: Int32Array): void {
  if (guarded.size === 0) process.once('exit', quietAll);
  guarded.set(worker, guard);
  worker.once('exit', () => {
    guarded.delete(worker);
    if (guarded.size === 0) process.off('exit', quietAll);
  });
}

/** Synchronously (the process is exiting): every thread stops starting calls; wait for those in progress. */
function quietAll(): void {
  const deadline = Date.now() + MAX_EXIT_WAIT_MS;
  for (const guard of guarded.values()) Atomics.store(guard, 1, 1);
  for (const guard of guarded.values()) {
    for (let busy = Atomics.load(guard, 0); busy > 0 && Date.now() < deadline; busy = Atomics.load(guard, 0)) {
      Atomics.wait(guard, 0, busy, deadline - Date.now());
    }
  }
}

/** ES2024's Atomics.waitAsync (Node ≥ 16). */
interface AtomicsWaitAsync {
  waitAsync(array: Int32Array, index: number, value: number, timeout: number): { value: Promise<string> | string };
}

/** Tells one thread to start no more calls and resolves when the call in progress has ended. */
async function quiet(guard: Int32Array): Promise<void> {
  Atomics.store(guard, 1, 1);
  const deadline = Date.now() + MAX_EXIT_WAIT_MS;
  for (let busy = Atomics.load(guard, 0); busy > 0 && Date.now() < deadline; busy = Atomics.load(guard, 0)) {
    await (Atomics as unknown as AtomicsWaitAsync).waitAsync(guard, 0, busy, deadline - Date.now()).value;
  }
}
