/**
 * Messages between an entry's calling thread (client.ts, proxy.ts) and the thread that runs the
 * engine (host.ts): the browser entry's Worker (browser.ts → worker.ts) and the Node entry's
 * worker thread (index.ts → node-worker.ts) speak the same protocol.
 * Every request carries an id; the Worker answers each with exactly one `result` or `error`
 * (plus `progress` messages for `create`). Both carry a stats snapshot so the calling
 * thread's `stats()` can stay synchronous.
 */
import type { SerializedError } from '../errors.js';
import type { Backend, CheckOptions, FillMaskStats, FillOptions, LoadProgress, ModelBytes } from '../types.js';

/** FillOptions minus the AbortSignal (not cloneable; cancellation is a `cancel` message). */
export type WireFillOptions = Omit<FillOptions, 'signal'>;

/** CheckOptions minus the AbortSignal. */
export type WireCheckOptions = Omit<CheckOptions, 'signal'>;

export interface WireCreateOptions {
  /** An absolute URL (resolved against the page), or the bytes. */
  model: string | ModelBytes;
  /** Each file's own absolute URL (the packaged default model, whose files a bundler renames). */
  files?: Record<string, string>;
  threads?: number;
  backend?: Backend;
  cache?: { maxEntries?: number; maxBytes?: number };
  /** Load the model's corpus memory (default true). */
  memory?: boolean;
  /** Absolute base URLs overriding where the wasm files are fetched from. */
  assets?: { core?: string; ort?: string };
  /** Answer `preview` fills from a split memory's first part while the model loads (a `preview` reply says when). */
  preview?: boolean;
}

/**
 * `aborted`: the caller's signal had already aborted; the request is checked as usual (its errors
 * win) and then rejects ABORTED without running the model. `preview`: a preview's fill, answered by
 * the preview engine until the model is ready, then by the model.
 */
export type Request =
  | { type: 'create'; id: number; options: WireCreateOptions }
  | { type: 'fill'; id: number; text: string; options: WireFillOptions; aborted?: boolean; preview?: boolean }
  | { type: 'fillBatch'; id: number; texts: string[]; options: WireFillOptions; aborted?: boolean }
  | { type: 'explain'; id: number; text: string; maskIndex: number; token: string; aborted?: boolean }
  | { type: 'check'; id: number; text: string; options: WireCheckOptions; aborted?: boolean }
  /** `preview`: may be answered by the preview engine (readings need no model). */
  | { type: 'readings'; id: number; text: string; preview?: boolean }
  | { type: 'cancel'; id: number; target: number }
  | { type: 'dispose'; id: number };

export type Reply =
  | { type: 'progress'; id: number; progress: LoadProgress }
  /** For a create with `preview`: the preview engine is ready (its stats: the vocabulary size for the checks). */
  | { type: 'preview'; id: number; stats: FillMaskStats }
  | { type: 'result'; id: number; value: unknown; stats: FillMaskStats | null }
  | { type: 'error'; id: number; error: SerializedError; stats?: FillMaskStats | null };
