/**
 * The calling thread's side of the Worker protocol (protocol.ts), for any worker its entry
 * adapts (connectWorker: the browser's Worker; index.ts: Node's worker_threads): request ids,
 * transferables, progress, cancellation of superseded requests, and failing everything when the
 * worker dies.
 */
import { checkSignal } from '../engine/options.js';
import { TiankongError, abortError, describe, deserializeError } from '../errors.js';
import type { FillMaskStats, LoadProgress } from '../types.js';
import type { Reply, Request } from './protocol.js';

type Pending = {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  onProgress?: (p: LoadProgress) => void;
  onPreview?: () => void;
};

/** The worker as the client sees it; each entry adapts its kind of worker (and feeds `receive`, `fail`). */
export interface WorkerEndpoint {
  postMessage(message: Request, transfer: Transferable[]): void;
  /** Ends the worker (resolves when it has ended, where the platform says). */
  terminate(): void | Promise<unknown>;
  /** Told whether any request is pending (Node: ref/unref, so an idle worker never keeps the process alive). */
  busy?(busy: boolean): void;
  /** Keeps the worker, its model disposed, for another model (Node); without it, close() terminates. */
  release?(): void;
}

/** Request ids, unique across the clients of this thread (a reused worker may still answer an old client). */
let nextId = 1;

/** Requests that carry `aborted` (protocol.ts) when their signal aborted before they were sent. */
const CHECKED_WHEN_ABORTED = new Set<Request['type']>(['fill', 'fillBatch', 'explain', 'check']);

/** Why the Worker died: offline before worker.js was ever downloaded, or a load/bundling problem. */
function workerError(event: ErrorEvent): TiankongError {
  if (!event.message && typeof navigator !== 'undefined' && navigator.onLine === false) {
    return new TiankongError(
      'NETWORK',
      "tiankong: the browser is offline, so the runtime's Worker (worker.js) could not be " +
        'downloaded; connect and try again (an app can precache it with a service worker to work offline)',
    );
  }
  return new TiankongError(
    'UNSUPPORTED',
    `tiankong: the Worker failed: ${event.message || 'could not load worker.js'}; ` +
      "make sure your bundler serves the package's dist/worker.js as a module worker",
  );
}

/** A client over a browser Worker (dedicated, module). */
export function connectWorker(worker: Worker): WorkerClient {
  const client = new WorkerClient({
    postMessage: (message, transfer) => worker.postMessage(message, transfer),
    terminate: () => worker.terminate(),
  });
  worker.onmessage = (event: MessageEvent<Reply>) => client.receive(event.data);
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    void client.fail(workerError(event));
  };
  return client;
}

/** Request/response bookkeeping over one worker. */
export class WorkerClient {
  private readonly pending = new Map<number, Pending>();
  private failure: TiankongError | null = null;
  private ended: Promise<void> | null = null;
  latestStats: FillMaskStats | null = null;

  constructor(private readonly endpoint: WorkerEndpoint) {}

  /** Throws the error every request now rejects with (DISPOSED after dispose, a dead worker's error). */
  throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  /**
   * Sends a request; `signal` cancels it (the worker skips it if it has not started). A signal
   * that aborted before the call: a create rejects at once; a fill, fillBatch or explain is still
   * checked by the engine (its errors come first, as in-process) and then rejects ABORTED.
   */
  request(
    message: DistributiveOmit<Request, 'id'>,
    options: {
      transfer?: Transferable[];
      signal?: AbortSignal;
      onProgress?: (p: LoadProgress) => void;
      /** A create's preview is ready (the `preview` reply). */
      onPreview?: () => void;
    } = {},
  ): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const { signal } = options;
    try {
      checkSignal(signal);
    } catch (error) {
      return Promise.reject(error);
    }
    const abortedBefore = signal?.aborted === true;
    if (abortedBefore && !CHECKED_WHEN_ABORTED.has(message.type)) return Promise.reject(abortError(signal));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.settle(id);
        this.post({ type: 'cancel', id: nextId++, target: id });
        reject(abortError(signal));
      };
      if (!abortedBefore) signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        resolve: (value) => {
          done();
          if (abortedBefore) reject(abortError(signal));
          else resolve(value);
        },
        reject: (error) => {
          done();
          const aborted = abortedBefore && error instanceof TiankongError && error.code === 'ABORTED';
          reject(aborted ? abortError(signal) : error);
        },
        onProgress: options.onProgress,
        onPreview: options.onPreview,
      });
      this.endpoint.busy?.(true);
      const request = { ...message, id, ...(abortedBefore ? { aborted: true } : {}) } as Request;
      try {
        this.endpoint.postMessage(request, options.transfer ?? []);
      } catch (error) {
        // Structured clone refused an argument (a function, a Proxy, a getter that throws…).
        this.settle(id);
        done();
        reject(
          new TiankongError(
            'BAD_OPTION',
            `tiankong: the arguments cannot be passed to the inference thread: ${describe(error)}; ` +
              'pass plain data (strings, numbers, arrays, plain objects, bytes)',
          ),
        );
      }
    });
  }

  /**
   * Rejects everything pending and every later request with `error`, and ends the worker;
   * resolves when it has ended. Only the first call counts.
   */
  fail(error: TiankongError): Promise<void> {
    this.failure ??= error;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
    // Held until it has ended (Node: an unreferenced worker's exit would not keep the process up to be seen).
    this.endpoint.busy?.(true);
    this.ended ??= Promise.resolve(this.endpoint.terminate()).then(
      () => undefined,
      () => undefined,
    );
    return this.ended;
  }

  /**
   * After a successful dispose: rejects what is pending and every later request with `error`, and
   * hands the worker back (WorkerEndpoint.release) or ends it.
   */
  close(error: TiankongError): Promise<void> {
    if (!this.endpoint.release || this.failure) return this.fail(error);
    this.failure = error;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
    this.endpoint.release();
    this.ended = Promise.resolve();
    return this.ended;
  }

  /** Handles one reply from the worker. */
  receive(reply: Reply): void {
    if (reply.type !== 'progress' && reply.stats) this.latestStats = reply.stats;
    const pending = this.pending.get(reply.id);
    if (!pending) return; // cancelled on this side already
    if (reply.type === 'progress' || reply.type === 'preview') {
      const callback = reply.type === 'progress' ? 'onProgress' : 'onPreview';
      try {
        if (reply.type === 'progress') pending.onProgress?.(reply.progress);
        else pending.onPreview?.();
      } catch (error) {
        // The caller's callback threw: its request fails, as a TiankongError like every rejection.
        this.settle(reply.id);
        this.post({ type: 'cancel', id: nextId++, target: reply.id });
        pending.reject(
          error instanceof TiankongError
            ? error
            : new TiankongError('BAD_OPTION', `tiankong: the ${callback} callback threw: ${describe(error)}`),
        );
      }
      return;
    }
    this.settle(reply.id);
    if (reply.type === 'result') pending.resolve(reply.value);
    else pending.reject(deserializeError(reply.error));
  }

  private settle(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.endpoint.busy?.(false);
  }

  private post(message: Request): void {
    if (this.failure) return;
    try {
      this.endpoint.postMessage(message, []);
    } catch {
      // a worker that has ended already
    }
  }
}

export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
