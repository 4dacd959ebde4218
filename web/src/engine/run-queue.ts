/**
 * Runs the engine's inference tasks one at a time, in order (ONNX Runtime Web cannot run one
 * session concurrently), and makes cancellation stop work, not only release the caller.
 *
 * Why yielding matters: ONNX Runtime Web's wasm backend runs a model call without returning to
 * the event loop, and a chain of awaited promises never does either (promise continuations are
 * microtasks). Without an explicit yield, a queue of runs, or an explain of 300 runs, holds the
 * thread until it is drained: in a browser Worker the `cancel` message is not read, in Node no
 * timer fires (AbortSignal.timeout, the test runner's RPC, a server's I/O). So:
 *
 * - the queue yields to the event loop (a macrotask: setImmediate in Node, a MessageChannel
 *   message in browsers and workers) before each task starts, then checks the task's signal;
 * - a task that makes several model runs (explain, joint decoding) calls `checkpoint()` before
 *   each run: it yields, then throws ABORTED (signal) or DISPOSED (queue closed), so a cancelled
 *   task stops after the run in progress;
 * - the caller is released the moment its signal aborts (the task's result, if it still
 *   finishes, is dropped; a single run in progress cannot be interrupted).
 *
 * The bound that follows: from an abort to the next queued request starting is at most the rest
 * of one model run plus a yield (tests/runtime/cancel.test.ts measures it in Node and in the Worker).
 */
import { TiankongError, abortError, throwIfAborted } from '../errors.js';

/** What a task may call between its model runs. */
export interface TaskContext {
  /** Yields to the event loop, then throws ABORTED or DISPOSED if the task should stop. */
  checkpoint(): Promise<void>;
}

/** Resolves after one macrotask turn of the event loop (timers, I/O and messages get through). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise<void>((resolve) => scheduleMacrotask(resolve));
}

type Schedule = (callback: () => void) => void;

/** setImmediate where it exists (Node); a MessageChannel message elsewhere (no 4 ms timer clamping); else a timer. */
const scheduleMacrotask: Schedule = (() => {
  const g = globalThis as { setImmediate?: (callback: () => void) => unknown };
  if (typeof g.setImmediate === 'function') return (callback) => void g.setImmediate!(callback);
  if (typeof MessageChannel === 'function') {
    const waiting: (() => void)[] = [];
    let channel: MessageChannel | null = null;
    return (callback) => {
      if (channel === null) {
        channel = new MessageChannel();
        channel.port1.onmessage = () => waiting.shift()?.();
      }
      waiting.push(callback);
      channel.port2.postMessage(null);
    };
  }
  return (callback) => void setTimeout(callback, 0);
})();

/** A queue of async tasks run one at a time, in order; closable (see close). */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private closedMessage: string | null = null;

  /**
   * Queues `task`. If `signal` aborts before the task starts, the task is skipped; if it aborts
   * while the task runs, the caller is released at once (ABORTED) and the task stops at its next
   * checkpoint (its result, if it finishes first, is dropped).
   */
  run<T>(task: (context: TaskContext) => Promise<T>, signal?: AbortSignal): Promise<T> {
    throwIfAborted(signal);
    this.throwIfClosed();
    const context: TaskContext = {
      checkpoint: async () => {
        await yieldToEventLoop();
        this.throwIfClosed();
        throwIfAborted(signal);
      },
    };
    const work = this.tail.then(async () => {
      await context.checkpoint();
      return task(context);
    });
    this.tail = work.catch(() => undefined);
    if (!signal) return work;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(abortError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /**
   * Rejects every task that has not started with DISPOSED(`message`), stops the running one at its
   * next checkpoint (so at most the model run in progress finishes), and resolves when it has ended.
   */
  async close(message: string): Promise<void> {
    this.closedMessage = message;
    await this.tail;
  }

  private throwIfClosed(): void {
    if (this.closedMessage !== null) throw new TiankongError('DISPOSED', this.closedMessage);
  }
}
