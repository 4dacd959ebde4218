/**
 * Messages between the browser entry (browser.ts and browser/client.ts, main thread) and the Worker (worker.ts).
 * Every request carries an id; the Worker answers each with exactly one `result` or `error`
 * (plus `progress` messages for `create`). Results carry a stats snapshot so the main
 * thread's `stats()` can stay synchronous.
 */
import type { SerializedError } from '../errors.js';
import type { Backend, FillMaskStats, FillOptions, LoadProgress, ModelBytes } from '../types.js';

/** FillOptions minus the AbortSignal (not cloneable; cancellation is a `cancel` message). */
export type WireFillOptions = Omit<FillOptions, 'signal'>;

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
}

export type Request =
  | { type: 'create'; id: number; options: WireCreateOptions }
  | { type: 'fill'; id: number; text: string; options: WireFillOptions }
  | { type: 'fillBatch'; id: number; texts: string[]; options: WireFillOptions }
  | { type: 'explain'; id: number; text: string; maskIndex: number; token: string }
  | { type: 'cancel'; id: number; target: number }
  | { type: 'dispose'; id: number };

export type Reply =
  | { type: 'progress'; id: number; progress: LoadProgress }
  | { type: 'result'; id: number; value: unknown; stats: FillMaskStats | null }
  | { type: 'error'; id: number; error: SerializedError };
