/**
 * tiankong browser entry: the same API as the Node entry, but the model runs in a dedicated
 * module Worker (worker.ts) so inference never blocks the page. This file only starts the Worker
 * and proxies the API to it: the model argument is resolved (URLs made absolute, bytes transferred)
 * and each call becomes a request (browser/proxy.ts, browser/client.ts: checks, ids, progress,
 * cancellation) — the same proxy the Node entry puts in front of its worker thread.
 *
 * Every file it needs is named by a literal `new URL('…', import.meta.url)` (the Worker, the core,
 * the packaged default model) or comes from onnxruntime-web's own literal URL (its wasm), so a
 * bundler emits them all without configuration.
 *
 * @example
 * ```ts
 * import { createFillMask } from 'tiankong'; // bundlers resolve the "browser" export to this file
 * const tk = await createFillMask({ onProgress: (p) => bar.update(p.loaded / p.total) }); // the packaged default model
 * let controller: AbortController | undefined;
 * input.oninput = async () => {
 *   controller?.abort(); // the previous keystroke's request is superseded
 *   controller = new AbortController();
 *   try {
 *     show(await tk.fill(input.value, { topK: 5, signal: controller.signal }));
 *   } catch (error) {
 *     if (!(error instanceof TiankongError && error.code === 'ABORTED')) showError(error);
 *   }
 * };
 * ```
 * @packageDocumentation
 */
import { connectWorker } from './browser/client.js';
import type { WireCreateOptions } from './browser/protocol.js';
import { proxyModel, proxyPreview } from './browser/proxy.js';
import { checkCreateOptions } from './engine/options.js';
import { TiankongError, describe } from './errors.js';
import { isModelBytes } from './model/bytes.js';
import type { CreateFillMaskOptions, FillMaskModel } from './types.js';

export { TiankongError } from './errors.js';
export type * from './types.js';

/** Options of the browser entry: CreateFillMaskOptions plus where the Worker and wasm files live. */
export interface BrowserFillMaskOptions extends CreateFillMaskOptions {
  /**
   * Override asset locations (a CDN, or a setup without a bundler): `core` = folder of
   * tiankong-core*.{mjs,wasm} (the package's dist/core/wasm/), `ort` = folder of
   * ort-wasm-simd-threaded.{mjs,wasm} (onnxruntime-web's dist/). By default bundlers emit both.
   */
  assets?: { core?: string | URL; ort?: string | URL };
}

/**
 * Vite's dev server pre-bundles dependencies into node_modules/.vite/deps/, where a relative
 * `new URL('./x', import.meta.url)` points at nothing (vitejs/vite#8427). There each file is named
 * by the package's own export instead (`tiankong/worker`, `tiankong/model/default/…`), which
 * Vite resolves. Both spellings are literals, so bundlers see and emit the files either way.
 */
const PREBUNDLED = /\/node_modules\/\.vite\/deps\//.test(import.meta.url);

/**
 * The model shipped in the package (model/default/), each file by a literal URL so that bundlers
 * emit it (renamed: hence one URL per file rather than a folder).
 */
function packagedModel(): { model: string; files: Record<string, string> } {
  const files = {
    'model.json': (PREBUNDLED
      ? new URL('tiankong/model/default/model.json', import.meta.url)
      : new URL('../model/default/model.json', import.meta.url)
    ).href,
    'model.onnx': (PREBUNDLED
      ? new URL('tiankong/model/default/model.onnx', import.meta.url)
      : new URL('../model/default/model.onnx', import.meta.url)
    ).href,
    'vocab.txt': (PREBUNDLED
      ? new URL('tiankong/model/default/vocab.txt', import.meta.url)
      : new URL('../model/default/vocab.txt', import.meta.url)
    ).href,
    'memory.bin': (PREBUNDLED
      ? new URL('tiankong/model/default/memory.bin', import.meta.url)
      : new URL('../model/default/memory.bin', import.meta.url)
    ).href,
    'memory-ngrams.bin': (PREBUNDLED
      ? new URL('tiankong/model/default/memory-ngrams.bin', import.meta.url)
      : new URL('../model/default/memory-ngrams.bin', import.meta.url)
    ).href,
    'head.bin': (PREBUNDLED
      ? new URL('tiankong/model/default/head.bin', import.meta.url)
      : new URL('../model/default/head.bin', import.meta.url)
    ).href,
  };
  // The folder only names the model in messages and stats; the files come from `files`.
  return { model: new URL('.', files['model.onnx']).href, files };
}

/** Resolves a model argument for the Worker: URLs become absolute; bytes are transferred when that is free. */
function wireModel(model: CreateFillMaskOptions['model']): {
  model: WireCreateOptions['model'];
  files?: Record<string, string>;
  transfer: Transferable[];
} {
  if (model === undefined) return { ...packagedModel(), transfer: [] };
  if (isModelBytes(model)) {
    // A view spanning its whole ArrayBuffer is transferred (the caller's buffer is detached); anything else is copied.
    const transfer = [
      model.modelBytes,
      model.vocabBytes,
      ...(model.memoryBytes ? [model.memoryBytes] : []),
      ...(model.memoryNgramsBytes ? [model.memoryNgramsBytes] : []),
      ...(model.headBytes ? [model.headBytes] : []),
    ]
      .map((bytes) =>
        bytes instanceof ArrayBuffer
          ? bytes
          : bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
            ? bytes.buffer
            : null,
      )
      .filter((buffer): buffer is ArrayBuffer => buffer instanceof ArrayBuffer);
    return { model, transfer: [...new Set(transfer)] };
  }
  if (typeof model !== 'string' && !(model instanceof URL)) {
    throw new TiankongError(
      'BAD_OPTION',
      'tiankong: model must be a URL, a URL string or { modelBytes, vocabBytes, manifest }',
    );
  }
  const base = typeof location === 'undefined' ? undefined : location.href;
  try {
    return { model: new URL(model, base).href, transfer: [] };
  } catch {
    throw new TiankongError(
      'UNSUPPORTED',
      `tiankong: ${String(model)} is not a URL; in a browser the model is a URL ` +
        '(local directories work in Node only)',
    );
  }
}

const absolute = (url: string | URL | undefined): string | undefined =>
  url === undefined ? undefined : new URL(url, typeof location === 'undefined' ? undefined : location.href).href;

/**
 * Starts a Worker, loads the model in it and returns a {@link FillMaskModel} proxy.
 * Rejects with a {@link TiankongError} (BAD_MODEL, INTEGRITY, NETWORK, UNSUPPORTED, BAD_OPTION, ABORTED).
 */
export async function createFillMask(options: BrowserFillMaskOptions = {}): Promise<FillMaskModel> {
  checkCreateOptions(options, ['assets']); // here too: a string, onProgress and signal never reach the Worker
  if (typeof Worker === 'undefined' || typeof WebAssembly === 'undefined') {
    throw new TiankongError(
      'UNSUPPORTED',
      'tiankong: this browser lacks Web Workers or WebAssembly, which tiankong needs',
    );
  }
  const { model, files, transfer } = wireModel(options.model);
  let worker: Worker;
  try {
    worker = PREBUNDLED
      ? new Worker(new URL('tiankong/worker', import.meta.url), { type: 'module', name: 'tiankong' })
      : new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'tiankong' });
  } catch (error) {
    throw new TiankongError('UNSUPPORTED', `tiankong: cannot start the Worker: ${describe(error)}`);
  }
  const client = connectWorker(worker);
  const wire: WireCreateOptions = {
    model,
    files,
    threads: options.threads,
    backend: options.backend,
    cache: options.cache,
    memory: options.memory,
    assets: { core: absolute(options.assets?.core), ort: absolute(options.assets?.ort) },
    preview: options.onPreview !== undefined,
  };
  const { onPreview } = options;
  try {
    await client.request(
      { type: 'create', options: wire },
      {
        transfer,
        signal: options.signal,
        onProgress: options.onProgress,
        ...(onPreview ? { onPreview: () => onPreview(proxyPreview(client)) } : {}),
      },
    );
  } catch (error) {
    void client.fail(error as TiankongError);
    throw error;
  }
  return proxyModel(client);
}
