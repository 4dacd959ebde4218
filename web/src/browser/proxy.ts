/**
 * The FillMaskModel an entry returns when its engine runs on another thread (the browser entry's
 * Worker, the Node entry's worker thread): each call becomes a request (client.ts). What the
 * calling thread does is small and synchronous: the checks that must happen before anything is
 * sent (the options object is read once, here, with the engine's own checks and messages, because
 * getters, Proxies, inherited properties and an AbortSignal do not cross a thread), then one
 * postMessage. The engine checks again on its thread; errors come back as TiankongErrors with
 * their code, message and index.
 */
import { checkCheckOptions, checkExplainOptions, checkFillOptions, checkText, checkTexts } from '../engine/options.js';
import { TiankongError } from '../errors.js';
import type {
  CheckOptions,
  CheckResult,
  ExplainOptions,
  ExplainResult,
  FillMaskModel,
  FillMaskPreview,
  FillMaskStats,
  FillOptions,
  FillResult,
  ReadingsResult,
} from '../types.js';
import type { WorkerClient } from './client.js';
import type { WireCheckOptions, WireFillOptions } from './protocol.js';

const disposedMessage = 'tiankong: this model was disposed; create a new one with createFillMask()';

/** The own properties of checked options (no signal) and the signal: what crosses and what stays. */
function split<T extends object>(options: T): { wire: Omit<T, 'signal'>; signal: AbortSignal | undefined } {
  const wire: Record<string, unknown> = {};
  let signal: AbortSignal | undefined;
  for (const key of Object.keys(options)) {
    const value = (options as Record<string, unknown>)[key];
    if (key === 'signal') signal = value as AbortSignal | undefined;
    else wire[key] = value;
  }
  return { wire: wire as Omit<T, 'signal'>, signal };
}

/**
 * A value that survives structured clone and that the engine's checks describe the same way
 * (options.ts: show): a text or token that is not a string is rejected there with its index.
 */
function cloneable(value: unknown): unknown {
  if (typeof value === 'function' || typeof value === 'symbol') return {};
  if (typeof value !== 'object' || value === null) return value;
  try {
    return Array.isArray(value) ? [] : {};
  } catch {
    return {}; // a revoked Proxy
  }
}

/** fill/fillBatch options checked on this thread (latestStats is set: its vocabulary size), split for the wire. */
function checkedFill(client: WorkerClient, options: FillOptions | undefined) {
  client.throwIfFailed(); // DISPOSED before BAD_OPTION, as in-process
  const value = options ?? {};
  checkFillOptions(value, client.latestStats!.model.vocabSize);
  return split(value) as { wire: WireFillOptions; signal: AbortSignal | undefined };
}

/**
 * The preview proxy over `client`, whose create request has had its `preview` reply (so
 * latestStats is set): fills marked `preview`, which the Worker answers from the memory alone
 * until the model is ready.
 */
export function proxyPreview(client: WorkerClient): FillMaskPreview {
  return {
    async fill(text: string, options?: FillOptions) {
      const { wire, signal } = checkedFill(client, options);
      checkText(text);
      return client.request({ type: 'fill', text, options: wire, preview: true }, { signal }) as Promise<FillResult>;
    },
    async readings(text: string) {
      client.throwIfFailed();
      checkText(text);
      return client.request({ type: 'readings', text, preview: true }) as Promise<ReadingsResult>;
    },
  };
}

/** The model proxy over `client`, whose create request has succeeded (so latestStats is set). */
export function proxyModel(client: WorkerClient): FillMaskModel {
  let disposed: Promise<void> | null = null;
  return {
    async fill(text: string, options?: FillOptions) {
      const { wire, signal } = checkedFill(client, options);
      checkText(text);
      return client.request({ type: 'fill', text, options: wire }, { signal }) as Promise<FillResult>;
    },
    async fillBatch(texts: string[], options?: FillOptions) {
      const { wire, signal } = checkedFill(client, options);
      checkTexts(texts);
      const sent = texts.some((t) => typeof t !== 'string') ? texts.map(cloneable) : texts;
      return client.request({ type: 'fillBatch', texts: sent as string[], options: wire }, { signal }) as Promise<
        FillResult[]
      >;
    },
    async explain(text: string, maskIndex: number, token: string, options: ExplainOptions = {}) {
      client.throwIfFailed();
      checkExplainOptions(options);
      const { signal } = split(options);
      checkText(text);
      return client.request(
        { type: 'explain', text, maskIndex: cloneable(maskIndex) as number, token: cloneable(token) as string },
        { signal },
      ) as Promise<ExplainResult>;
    },
    async check(text: string, options: CheckOptions = {}) {
      client.throwIfFailed();
      checkCheckOptions(options);
      const { wire, signal } = split(options) as { wire: WireCheckOptions; signal: AbortSignal | undefined };
      checkText(text);
      return client.request({ type: 'check', text, options: wire }, { signal }) as Promise<CheckResult>;
    },
    async readings(text: string) {
      client.throwIfFailed();
      checkText(text);
      return client.request({ type: 'readings', text }) as Promise<ReadingsResult>;
    },
    stats(): FillMaskStats {
      return client.latestStats!;
    },
    dispose() {
      disposed ??= client.request({ type: 'dispose' }).then(
        () => client.close(new TiankongError('DISPOSED', disposedMessage)),
        () => undefined,
      );
      return disposed;
    },
  };
}
