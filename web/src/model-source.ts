/**
 * Getting a model's bytes from a URL (streamed, with progress, integrity-checked, kept in
 * Cache Storage where available) or from memory. Local directories are read by
 * node-model.ts (Node only). Every path ends in the same checks: a valid manifest and files
 * whose size and sha256 match it.
 */
import { TiankongError, abortError, describe, throwIfAborted } from './errors.js';
import { MANIFEST_FILE, MODEL_FILE, checkManifest, parseManifest, sha256Hex, verifyFile } from './manifest.js';
import type { LoadProgress, ModelBytes, ModelManifest } from './types.js';

/** A model in memory, verified against its manifest. */
export interface LoadedModel {
  manifest: ModelManifest;
  modelBytes: Uint8Array;
  vocabBytes: Uint8Array;
  /** The corpus memory's bytes, when the manifest lists one and it was wanted. */
  memoryBytes?: Uint8Array;
  /** Where it came from, for messages and stats. */
  source: string;
}

export interface LoadModelOptions {
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
  /** Load the corpus memory when the manifest lists one (default true). */
  memory?: boolean;
}

/** The memory file to load for these options, or null. */
export function wantedMemoryFile(manifest: ModelManifest, options: LoadModelOptions): string | null {
  return options.memory !== false && manifest.memory ? manifest.memory.file : null;
}

/** Cache Storage bucket; bump the suffix if the stored format ever changes. */
export const MODEL_CACHE_NAME = 'tiankong-models-v1';

/** True for a model given as bytes rather than a location. */
export function isModelBytes(source: unknown): source is ModelBytes {
  return typeof source === 'object' && source !== null && !(source instanceof URL) && 'modelBytes' in source;
}

function asBytes(data: Uint8Array | ArrayBuffer, what: string): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  throw new TiankongError('BAD_OPTION', `tiankong: model.${what} must be a Uint8Array or an ArrayBuffer`);
}

/** Checks a model given as bytes (same checks as a downloaded one). */
export async function loadModelFromBytes(model: ModelBytes, options: LoadModelOptions = {}): Promise<LoadedModel> {
  const manifest = checkManifest(model.manifest, 'model.manifest');
  const modelBytes = asBytes(model.modelBytes, 'modelBytes');
  const vocabBytes = asBytes(model.vocabBytes, 'vocabBytes');
  await verifyFile(manifest, MODEL_FILE, modelBytes, 'model.modelBytes');
  await verifyFile(manifest, manifest.tokenizer.vocab, vocabBytes, 'model.vocabBytes');
  const memoryFile = model.memoryBytes === undefined ? null : wantedMemoryFile(manifest, options);
  const memoryBytes = memoryFile === null ? undefined : asBytes(model.memoryBytes!, 'memoryBytes');
  if (memoryFile !== null) await verifyFile(manifest, memoryFile, memoryBytes!, 'model.memoryBytes');
  const loaded: [LoadProgress['file'], Uint8Array][] = [[MODEL_FILE, modelBytes], ['vocab.txt', vocabBytes]];
  if (memoryBytes) loaded.push(['memory.bin', memoryBytes]);
  for (const [file, bytes] of loaded) {
    options.onProgress?.({ file, loaded: bytes.byteLength, total: bytes.byteLength, source: 'memory' });
  }
  return { manifest, modelBytes, vocabBytes, ...(memoryBytes ? { memoryBytes } : {}), source: 'memory' };
}

/**
 * Downloads a model directory: `base`/model.json, then the files it lists. With Cache Storage
 * (browsers, workers) the files are stored under their URL + sha256, so a second load reads
 * them from the cache; only verified, complete files are ever stored.
 */
export async function loadModelFromUrl(base: URL, options: LoadModelOptions = {}): Promise<LoadedModel> {
  const folder = base.href.endsWith('/') ? base : new URL(`${base.href}/`);
  const manifestUrl = new URL(MANIFEST_FILE, folder);
  // no-cache = revalidate: a re-exported model is noticed, an unchanged one costs a 304.
  const manifestResponse = await get(manifestUrl, options.signal, 'no-cache');
  const manifestText = await manifestResponse.text();
  const manifest = parseManifest(manifestText, manifestUrl.href);
  const manifestBytes = new TextEncoder().encode(manifestText).byteLength;
  options.onProgress?.({ file: 'model.json', loaded: manifestBytes, total: manifestBytes, source: 'network' });
  const cache = await openModelCache();
  const fetchFile = (file: string) => fetchVerified(new URL(file, folder), file, manifest, cache, options);
  const vocabBytes = await fetchFile(manifest.tokenizer.vocab);
  const memoryFile = wantedMemoryFile(manifest, options);
  // The model and the memory download side by side (both are several MB).
  const [modelBytes, memoryBytes] = await Promise.all([fetchFile(MODEL_FILE),
    memoryFile === null ? Promise.resolve(undefined) : fetchFile(memoryFile)]);
  return { manifest, modelBytes, vocabBytes, ...(memoryBytes ? { memoryBytes } : {}), source: folder.href };
}

async function openModelCache(): Promise<Cache | null> {
  if (typeof caches === 'undefined') return null;
  try {
    return await caches.open(MODEL_CACHE_NAME);
  } catch {
    return null; // e.g. an opaque origin or storage disabled: download every time
  }
}

/** The Cache Storage key of one file version. */
export function modelCacheKey(url: URL, sha256: string): string {
  const keyed = new URL(url.href);
  keyed.searchParams.set('tiankong-sha256', sha256);
  return keyed.href;
}

async function fetchVerified(url: URL, file: string, manifest: ModelManifest, cache: Cache | null,
  options: LoadModelOptions): Promise<Uint8Array> {
  const { sha256, bytes: total } = manifest.files[file]!;
  const progressFile: LoadProgress['file'] = file === MODEL_FILE ? MODEL_FILE
    : file === manifest.tokenizer.vocab ? 'vocab.txt' : 'memory.bin';
  const key = modelCacheKey(url, sha256);
  if (cache) {
    const hit = await cache.match(key).catch(() => undefined);
    if (hit) {
      const bytes = new Uint8Array(await hit.arrayBuffer());
      // Re-verify: storage can be corrupted or evicted halfway; then download again.
      if (bytes.byteLength === total && (await sha256Hex(bytes)) === sha256) {
        options.onProgress?.({ file: progressFile, loaded: total, total, source: 'cache' });
        return bytes;
      }
      await cache.delete(key).catch(() => false);
    }
  }
  const response = await get(url, options.signal);
  const bytes = await readBody(response, url, total, (loaded) =>
    options.onProgress?.({ file: progressFile, loaded, total, source: 'network' }), options.signal);
  await verifyFile(manifest, file, bytes, url.href);
  if (cache) await storeVersion(cache, url, key, bytes);
  return bytes;
}

/** Stores a verified file and drops the other versions of the same URL. A full disk is not an error. */
async function storeVersion(cache: Cache, url: URL, key: string, bytes: Uint8Array): Promise<void> {
  try {
    await cache.put(key, new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'Content-Type': 'application/octet-stream' } }));
    for (const request of await cache.keys()) {
      const other = new URL(request.url);
      other.searchParams.delete('tiankong-sha256');
      if (other.href === url.href && request.url !== key) await cache.delete(request);
    }
  } catch {
    // Quota exceeded or storage unavailable: the model still works, it is just downloaded next time.
  }
}

async function get(url: URL, signal: AbortSignal | undefined, cacheMode?: RequestCache): Promise<Response> {
  throwIfAborted(signal);
  let response: Response;
  try {
    response = await fetch(url, { signal, ...(cacheMode ? { cache: cacheMode } : {}) });
  } catch (error) {
    if (signal?.aborted) throw abortError(signal);
    throw new TiankongError('NETWORK', `tiankong: could not download ${url.href}: ${describe(error)}; ` +
      'check the network connection and the model URL', { cause: error });
  }
  if (!response.ok) {
    throw new TiankongError('NETWORK', `tiankong: HTTP ${response.status} ${response.statusText} for ${url.href}` +
      (response.status === 404 ? '; the model URL must be the directory that holds model.json, model.onnx and vocab.txt' : ''));
  }
  if ((response.headers.get('Content-Type') ?? '').includes('text/html')) throw htmlInsteadOfModel(url);
  return response;
}

function htmlInsteadOfModel(url: URL): TiankongError {
  return new TiankongError('BAD_MODEL', `tiankong: ${url.href} returned an HTML page instead of the model file ` +
    '(a dev server or SPA fallback answers missing files with index.html); check that the model files are served at that URL');
}

/** An HTML document starts with "<!doctype" or "<html" (after optional whitespace); model files never do. */
function looksLikeHtml(head: Uint8Array): boolean {
  const text = new TextDecoder().decode(head.subarray(0, 64)).trimStart().toLowerCase();
  return text.startsWith('<!doctype') || text.startsWith('<html');
}

/** Reads a response body into one buffer, reporting progress; never more than `expected` bytes. */
async function readBody(response: Response, url: URL, expected: number, onProgress: (loaded: number) => void,
  signal?: AbortSignal): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  const buffer = new Uint8Array(expected);
  const reader = response.body.getReader();
  let loaded = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (loaded === 0 && looksLikeHtml(value)) throw htmlInsteadOfModel(url);
      if (loaded + value.byteLength > expected) {
        throw new TiankongError('INTEGRITY', `tiankong: ${url.href} is larger than the ${expected} bytes model.json ` +
          'declares; the file is from another model — re-export or re-download it');
      }
      buffer.set(value, loaded);
      loaded += value.byteLength;
      onProgress(loaded);
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    if (error instanceof TiankongError) throw error;
    if (signal?.aborted) throw abortError(signal);
    throw new TiankongError('NETWORK', `tiankong: the download of ${url.href} failed after ${loaded} bytes: ` +
      `${describe(error)}`, { cause: error });
  }
  return loaded === expected ? buffer : buffer.subarray(0, loaded); // short → verifyFile reports it
}
