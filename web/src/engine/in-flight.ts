/**
 * Identical requests in flight share one computation (one model run for ten equal fills sent at
 * once, before the first has put its result in the cache). A shared computation is keyed by what
 * decides its result (token ids, mask positions, the options' cache fingerprint) and is cancelled
 * only when every caller waiting for it has cancelled: one caller's AbortSignal releases that
 * caller at once (ABORTED) and never stops the work the others wait for.
 */
import { abortError } from '../errors.js';

interface Shared {
  promise: Promise<unknown>;
  controller: AbortController;
  /** Callers still waiting; a caller without a signal can never leave. */
  waiting: number;
}

/** Computations in flight by key (see the file comment). */
export class InFlight {
  private readonly shared = new Map<string, Shared>();

  /**
   * The result of the computation in flight under `key`, or of `start(signal)` started now when
   * none is. `signal` aborts when every caller has gone (their signals aborted); the caller with
   * `callerSignal` is released ABORTED the moment it aborts. `start` is called synchronously, so
   * a queued task keeps its place in the queue.
   */
  join<T>(key: string, start: (signal: AbortSignal) => Promise<T>, callerSignal?: AbortSignal): Promise<T> {
    if (callerSignal?.aborted) return Promise.reject(abortError(callerSignal));
    let entry = this.shared.get(key);
    if (!entry) {
      const controller = new AbortController();
      let promise: Promise<unknown>;
      try {
        promise = start(controller.signal);
      } catch (error) {
        promise = Promise.reject(error);
      }
      const created: Shared = { promise, controller, waiting: 0 };
      entry = created;
      this.shared.set(key, created);
      const forget = () => {
        if (this.shared.get(key) === created) this.shared.delete(key);
      };
      promise.then(forget, forget);
    }
    const joined = entry;
    joined.waiting++;
    const work = joined.promise as Promise<T>;
    if (!callerSignal) return work;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        reject(abortError(callerSignal));
        if (--joined.waiting === 0) {
          // Nobody waits any more: later equal requests start afresh rather than join a cancelled run.
          if (this.shared.get(key) === joined) this.shared.delete(key);
          joined.controller.abort(callerSignal.reason);
        }
      };
      callerSignal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => callerSignal.removeEventListener('abort', onAbort));
    });
  }

  /** How many computations are in flight (for tests). */
  get size(): number {
    return this.shared.size;
  }
}
