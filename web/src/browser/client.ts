/**
 * The main-thread side of the Worker protocol (protocol.ts): request ids, transferables,
 * progress, cancellation of superseded requests, and failing everything when the Worker dies.
 */
import { checkSignal } from '../engine/options.js';
import { TiankongError, abortError, deserializeError } from '../errors.js';
import type { FillMaskStats, LoadProgress } from '../types.js';
import type { Reply, Request } from './protocol.js';

type Pending = {
  resolve(value: unknown): void;
  reject(error: TiankongError): void;
  onProgress?: (p: LoadProgress) => void;
};

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

/** Request/response bookkeeping over one Worker. */
export class WorkerClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private failure: TiankongError | null = null;
  latestStats: FillMaskStats | null = null;

  constructor(private readonly worker: Worker) {
    worker.onmessage = (event: MessageEvent<Reply>) => this.receive(event.data);
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.fail(workerError(event));
    };
  }

  /** Sends a request; `signal` cancels it (the Worker skips it if it has not started). */
  request(
    message: DistributiveOmit<Request, 'id'>,
    options: { transfer?: Transferable[]; signal?: AbortSignal; onProgress?: (p: LoadProgress) => void } = {},
  ): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const { signal } = options;
    try {
      checkSignal(signal);
    } catch (error) {
      return Promise.reject(error);
    }
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.pending.delete(id);
        this.worker.postMessage({ type: 'cancel', id: this.nextId++, target: id } satisfies Request);
        reject(abortError(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        resolve: (value) => {
          done();
          resolve(value);
        },
        reject: (error) => {
          done();
          reject(error);
        },
        onProgress: options.onProgress,
      });
      this.worker.postMessage({ ...message, id } as Request, options.transfer ?? []);
    });
  }

  /** Rejects everything pending and every later request with `error`, and ends the Worker. */
  fail(error: TiankongError): void {
    this.failure ??= error;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
    this.worker.terminate();
  }

  private receive(reply: Reply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return; // cancelled on this side already
    if (reply.type === 'progress') return pending.onProgress?.(reply.progress);
    this.pending.delete(reply.id);
    if (reply.type === 'result') {
      if (reply.stats) this.latestStats = reply.stats;
      pending.resolve(reply.value);
    } else {
      pending.reject(deserializeError(reply.error));
    }
  }
}

export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
