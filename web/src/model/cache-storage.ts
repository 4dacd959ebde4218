/**
 * Cache Storage as the store of verified model files (browsers, workers, the app's service
 * worker): each file version is stored under its URL + sha256, so a second load reads it from the
 * cache and a re-exported file is a new key. Only verified, complete files are ever stored.
 */
import type { FileStore } from './load.js';
import type { ListedFile } from './manifest.js';

/** Cache Storage bucket; bump the suffix if the stored format ever changes. */
export const MODEL_CACHE_NAME = 'tiankong-models-v1';

/**
 * The Cache Storage key of one file version (also used by the app's service worker to precache).
 *
 * @example
 * ```ts
 * modelCacheKey(new URL('https://x/m/model.onnx'), 'ab…'); // 'https://x/m/model.onnx?tiankong-sha256=ab…'
 * ```
 */
export function modelCacheKey(url: URL, sha256: string): string {
  const keyed = new URL(url.href);
  keyed.searchParams.set('tiankong-sha256', sha256);
  return keyed.href;
}

/**
 * The store for the model directory at `folder` (or for files at `urlOf(name)`), or null where
 * Cache Storage is missing or refused (Node, an opaque origin, storage disabled): files are then
 * downloaded every time.
 */
export async function openModelCache(
  folder: URL,
  urlOf: (name: string) => URL = (name) => new URL(name, folder),
): Promise<FileStore | null> {
  if (typeof caches === 'undefined') return null;
  let cache: Cache;
  try {
    cache = await caches.open(MODEL_CACHE_NAME);
  } catch {
    return null;
  }
  const fileUrl = (file: ListedFile) => urlOf(file.name);
  return {
    async get(file) {
      const hit = await cache.match(modelCacheKey(fileUrl(file), file.sha256)).catch(() => undefined);
      return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
    },
    async drop(file) {
      await cache.delete(modelCacheKey(fileUrl(file), file.sha256)).catch(() => false);
    },
    async put(file, bytes) {
      // Stores the version and drops the other versions of the same URL.
      const url = fileUrl(file);
      const key = modelCacheKey(url, file.sha256);
      try {
        await cache.put(
          key,
          new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'Content-Type': 'application/octet-stream' } }),
        );
        for (const request of await cache.keys()) {
          const other = new URL(request.url);
          other.searchParams.delete('tiankong-sha256');
          if (other.href === url.href && request.url !== key) await cache.delete(request);
        }
      } catch {
        // Quota exceeded or storage unavailable: the model still works, it is just downloaded next time.
      }
    },
  };
}
