/**
 * A model directory at a URL: model.json revalidated, the files streamed with progress (never more
 * bytes than model.json declares) and kept in Cache Storage where there is one (cache-storage.ts).
 * Servers that answer with an HTML page (SPA fallbacks) are recognised and named.
 */
import { TiankongError, abortError, describe, throwIfAborted } from '../errors.js';
import { openModelCache } from './cache-storage.js';
import { type LoadModelOptions, type LoadedModel, loadModel } from './load.js';
import { MANIFEST_FILE, parseManifest } from './manifest.js';

/**
 * Downloads the model directory at `base` (model.json, then the files it lists). With Cache
 * Storage (browsers, workers) a second load reads verified copies from the cache. `located`
 * gives each file's own URL instead (a bundler renames what it emits: the packaged default
 * model); a listed file missing from it is BAD_MODEL.
 */
export async function loadModelFromUrl(
  base: URL,
  options: LoadModelOptions = {},
  located?: Record<string, string>,
): Promise<LoadedModel> {
  const folder = base.href.endsWith('/') ? base : new URL(`${base.href}/`);
  const urlOf = (name: string): URL => {
    if (!located) return new URL(name, folder);
    const url = Object.hasOwn(located, name) ? located[name] : undefined;
    if (url === undefined)
      throw new TiankongError('BAD_MODEL', `tiankong: model.json lists ${name}, which this model does not ship`);
    return new URL(url);
  };
  const store = await openModelCache(folder, located ? urlOf : undefined);
  return loadModel(
    {
      source: folder.href,
      kind: 'network',
      async manifest(onBytes, signal) {
        const url = urlOf(MANIFEST_FILE);
        // no-cache = revalidate: a re-exported model is noticed, an unchanged one costs a 304.
        const text = await (await get(url, signal, 'no-cache')).text();
        const manifest = parseManifest(text, url.href);
        const bytes = new TextEncoder().encode(text).byteLength;
        onBytes(bytes, bytes);
        return manifest;
      },
      async read(file, onBytes, signal) {
        const url = urlOf(file.name);
        return readBody(await get(url, signal), url, file.bytes, (loaded) => onBytes(loaded, file.bytes), signal);
      },
      where: (file) => (located && !Object.hasOwn(located, file.name) ? file.name : urlOf(file.name).href),
    },
    options,
    store,
  );
}

/**
 * A data: URL's bytes without fetch: bundlers inline small files (Vite: the packaged model.json)
 * as data: URLs, which a Content-Security-Policy's connect-src rarely allows.
 */
function dataUrlResponse(url: URL): Response {
  const comma = url.href.indexOf(',');
  const meta = url.href.slice('data:'.length, comma < 0 ? undefined : comma);
  const body = comma < 0 ? '' : url.href.slice(comma + 1);
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = /;base64$/i.test(meta)
      ? Uint8Array.from(atob(decodeURIComponent(body)), (c) => c.charCodeAt(0))
      : new TextEncoder().encode(decodeURIComponent(body));
  } catch (error) {
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: a malformed data: URL (${url.href.slice(0, 40)}…): ${describe(error)}`,
    );
  }
  return new Response(bytes, { headers: { 'Content-Type': meta.split(';')[0] || 'text/plain' } });
}

async function get(url: URL, signal: AbortSignal | undefined, cacheMode?: RequestCache): Promise<Response> {
  throwIfAborted(signal);
  if (url.protocol === 'data:') return dataUrlResponse(url);
  let response: Response;
  try {
    response = await fetch(url, { signal, ...(cacheMode ? { cache: cacheMode } : {}) });
  } catch (error) {
    if (signal?.aborted) throw abortError(signal);
    throw new TiankongError(
      'NETWORK',
      `tiankong: could not download ${url.href}: ${describe(error)}; ` +
        'check the network connection and the model URL',
      { cause: error },
    );
  }
  if (!response.ok) {
    throw new TiankongError(
      'NETWORK',
      `tiankong: HTTP ${response.status} ${response.statusText} for ${url.href}` +
        (response.status === 404
          ? '; the model URL must be the directory that holds model.json, model.onnx and vocab.txt'
          : ''),
    );
  }
  if ((response.headers.get('Content-Type') ?? '').includes('text/html')) throw htmlInsteadOfModel(url);
  return response;
}

function htmlInsteadOfModel(url: URL): TiankongError {
  return new TiankongError(
    'BAD_MODEL',
    `tiankong: ${url.href} returned an HTML page instead of the model file ` +
      '(a dev server or SPA fallback answers missing files with index.html); check that the model files are served at that URL',
  );
}

/** An HTML document starts with "<!doctype" or "<html" (after optional whitespace); model files never do. */
function looksLikeHtml(head: Uint8Array): boolean {
  const text = new TextDecoder().decode(head.subarray(0, 64)).trimStart().toLowerCase();
  return text.startsWith('<!doctype') || text.startsWith('<html');
}

/** Reads a response body into one buffer, reporting progress; never more than `expected` bytes. */
async function readBody(
  response: Response,
  url: URL,
  expected: number,
  onProgress: (loaded: number) => void,
  signal?: AbortSignal,
): Promise<Uint8Array> {
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
        throw new TiankongError(
          'INTEGRITY',
          `tiankong: ${url.href} is larger than the ${expected} bytes model.json ` +
            'declares; the file is from another model — re-export or re-download it',
        );
      }
      buffer.set(value, loaded);
      loaded += value.byteLength;
      onProgress(loaded);
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    if (error instanceof TiankongError) throw error;
    if (signal?.aborted) throw abortError(signal);
    throw new TiankongError(
      'NETWORK',
      `tiankong: the download of ${url.href} failed after ${loaded} bytes: ` + `${describe(error)}`,
      { cause: error },
    );
  }
  return loaded === expected ? buffer : buffer.subarray(0, loaded); // short → verifyFile reports it
}
