/**
 * The thread side of the Worker protocol (protocol.ts), shared by the browser's Worker
 * (worker.ts) and the Node entry's worker thread (node-worker.ts): one engine per thread, each
 * request answered with exactly one `result` or `error` (both with a stats snapshot), `cancel`
 * aborting the request it names. The entry only says how to post a reply and how to build the
 * engine (its runtime, its model sources).
 */
import type { FillMaskEngine } from '../engine/engine.js';
import { TiankongError, serializeError } from '../errors.js';
import type { LoadProgress } from '../types.js';
import type { Reply, Request, WireCreateOptions } from './protocol.js';

export interface HostSetup {
  post(reply: Reply): void;
  /**
   * Loads the model and builds the engine; `onProgress` posts progress for the create request, and
   * `onPreview` (when the options ask for a preview and the model allows one) hands over an engine
   * that answers preview fills until this resolves.
   */
  create(
    options: WireCreateOptions,
    context: {
      signal: AbortSignal;
      onProgress: (p: LoadProgress) => void;
      onPreview: (preview: FillMaskEngine) => void;
    },
  ): Promise<FillMaskEngine>;
}

/** Returns the handler of incoming requests (call it with each message's data). */
export function serveEngine(setup: HostSetup): (request: Request) => Promise<void> {
  let engine: FillMaskEngine | null = null;
  /** Answers preview fills while the model loads (then disposed once the fills it holds are done). */
  let preview: FillMaskEngine | null = null;
  const previewFills = new Set<Promise<unknown>>();
  const endPreview = () => {
    const ending = preview;
    preview = null;
    if (ending) void Promise.allSettled([...previewFills]).then(() => ending.dispose());
  };
  /** The engine was disposed: a new create may load another model in this thread (Node reuses threads). */
  let released = false;
  /** Requests in progress, so a `cancel` can abort them. */
  const running = new Map<number, AbortController>();

  async function handle(request: Request, signal: AbortSignal): Promise<unknown> {
    if (request.type === 'create') {
      if (engine && !released) throw new TiankongError('BAD_OPTION', 'tiankong: this Worker already holds a model');
      const { id } = request;
      try {
        engine = await setup.create(request.options, {
          signal,
          onProgress: (progress) => setup.post({ type: 'progress', id, progress }),
          onPreview: (ready) => {
            preview = ready;
            setup.post({ type: 'preview', id, stats: ready.stats() });
          },
        });
      } finally {
        endPreview();
      }
      released = false;
      return undefined;
    }
    if (request.type === 'dispose') {
      await engine?.dispose();
      released = true;
      return undefined;
    }
    if ((request.type === 'fill' || request.type === 'readings') && request.preview && !(engine && !released)) {
      if (!preview)
        throw new TiankongError('DISPOSED', 'tiankong: the preview ended: its model failed to load or was disposed');
      if (request.type === 'readings') return preview.readings(request.text);
      const fill = preview.fill(request.text, { ...request.options, signal });
      previewFills.add(fill);
      void fill.catch(() => undefined).then(() => previewFills.delete(fill));
      return fill;
    }
    if (!engine) throw new TiankongError('DISPOSED', 'tiankong: no model is loaded in this Worker');
    if (request.type === 'fill') return engine.fill(request.text, { ...request.options, signal });
    if (request.type === 'fillBatch') return engine.fillBatch(request.texts, { ...request.options, signal });
    if (request.type === 'explain') return engine.explain(request.text, request.maskIndex, request.token, { signal });
    if (request.type === 'check') return engine.check(request.text, { ...request.options, signal });
    if (request.type === 'readings') return engine.readings(request.text);
    throw new TiankongError(
      'BAD_OPTION',
      `tiankong: unknown request ${JSON.stringify((request as { type: unknown }).type)}`,
    );
  }

  return async (request: Request) => {
    if (request.type === 'cancel') {
      running.get(request.target)?.abort('superseded');
      return;
    }
    const controller = new AbortController();
    // The caller's signal had aborted before it asked: the checks still run (their errors come
    // first, as in-process), then the engine rejects ABORTED without running the model.
    if ('aborted' in request && request.aborted) controller.abort('aborted before the request');
    running.set(request.id, controller);
    try {
      const value = await handle(request, controller.signal);
      setup.post({ type: 'result', id: request.id, value, stats: engine?.stats() ?? null });
    } catch (error) {
      setup.post({ type: 'error', id: request.id, error: serializeError(error), stats: engine?.stats() ?? null });
    } finally {
      running.delete(request.id);
    }
  };
}
