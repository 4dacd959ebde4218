/**
 * Runs async tasks one at a time, in order. ONNX Runtime Web cannot run one session
 * concurrently, so every `session.run` goes through one of these.
 */
import { TiankongError, abortError, throwIfAborted } from '../errors.js';

/** A queue of async tasks run one at a time, in order; closable (see close). */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private closedMessage: string | null = null;

  /**
   * Queues `task`. If `signal` aborts before the task starts, the task is skipped; if it
   * aborts while the task runs, the caller is released at once (ABORTED) and the task's
   * result is dropped when it finishes (a running inference cannot be interrupted).
   */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    throwIfAborted(signal);
    const work = this.tail.then(() => {
      if (this.closedMessage !== null) throw new TiankongError('DISPOSED', this.closedMessage);
      throwIfAborted(signal);
      return task();
    });
    this.tail = work.catch(() => undefined);
    if (!signal) return work;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(abortError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Rejects every task that has not started with DISPOSED(`message`); resolves when the running one ends. */
  async close(message: string): Promise<void> {
    this.closedMessage = message;
    await this.tail;
  }
}
