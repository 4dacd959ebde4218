/**
 * The app's service worker.
 *
 * - install: precaches the app shell and runtime into `tiankong-app-<version>` (files whose
 *   revision is unchanged are copied from the previous version's cache instead of
 *   downloaded; the others are revalidated, so what the page already loaded on this visit
 *   costs a 304) and the model files into the runtime's own content-addressed model cache,
 *   so the runtime finds them there and the model is stored once (a model the runtime
 *   already stored is skipped). Lazy files (the idiom dictionary) are not downloaded: they are
 *   copied from an older version or the HTTP cache when there, else cached when the page
 *   first asks for them. Progress goes to the pages as
 *   `{ type: 'tiankong-precache', loaded, total }` messages.
 * - activate: deletes other versions' app caches (one version's files are never mixed with
 *   another's) and takes control of open pages.
 * - fetch: same-origin GETs only; served from the version's cache, else the network (a lazy
 *   file is stored on the way). Every
 *   response it serves gets the cross-origin-isolation headers (COOP/COEP/CORP), so threads
 *   work on static hosts that cannot set headers.
 * - message `{ type: 'skip-waiting' }` activates a waiting update (the page then reloads);
 *   `{ type: 'claim' }` takes control of a page that loaded without it (a hard reload).
 */
import { MODEL_CACHE_NAME, modelCacheKey } from '../../../src/model/cache-storage.js';

declare const self: ServiceWorkerGlobalScope;

interface AppEntry {
  /** Relative to the scope. */
  url: string;
  revision: string;
  bytes: number;
}

interface ModelEntry {
  url: string;
  sha256: string;
  bytes: number;
}

declare const __PRECACHE__: { version: string; app: AppEntry[]; lazy: AppEntry[]; model: ModelEntry[] };
declare const __ISOLATION_HEADERS__: Record<string, string>;

const { version: VERSION, app: APP_ENTRIES, lazy: LAZY_ENTRIES, model: MODEL_ENTRIES } = __PRECACHE__;
const APP_CACHE_PREFIX = 'tiankong-app-';
const APP_CACHE = `${APP_CACHE_PREFIX}${VERSION}`;
/** Stored on each cached app response: the revision it was cached for. */
const REVISION_HEADER = 'X-Tiankong-Revision';
const PARALLEL_DOWNLOADS = 4;

const scopeUrl = (relative: string): string => new URL(relative, self.registration.scope).href;
const appRevisions = new Map([...APP_ENTRIES, ...LAZY_ENTRIES].map((e) => [scopeUrl(e.url), e.revision]));
const lazyEntries = new Map(LAZY_ENTRIES.map((e) => [scopeUrl(e.url), e]));
const modelUrls = new Set(MODEL_ENTRIES.map((e) => scopeUrl(e.url)));

// ---- install --------------------------------------------------------------------------

/** Counts precached bytes and tells every window (controlled or not) how far it is. */
class Progress {
  private loaded = 0;
  private lastPost = 0;
  constructor(private readonly total: number) {}

  add(bytes: number): void {
    this.loaded += bytes;
    const now = Date.now();
    if (now - this.lastPost > 100 || this.loaded >= this.total) {
      this.lastPost = now;
      void this.post();
    }
  }

  async post(): Promise<void> {
    const message = { type: 'tiankong-precache', version: VERSION, loaded: this.loaded, total: this.total };
    for (const client of await self.clients.matchAll({ type: 'window', includeUncontrolled: true }))
      client.postMessage(message);
  }
}

/**
 * Downloads `url` and stores it in `cache` under `key`, streaming (a 100 MB model is never
 * held in memory) and counting bytes. Refuses error statuses, redirects to other origins,
 * HTML where a file was expected, and bodies whose size differs from the build's.
 */
async function download(
  url: string,
  key: string,
  expectedBytes: number,
  cache: Cache,
  progress: Progress | null,
  headers: Record<string, string>,
  init: RequestInit = { cache: 'no-cache' },
): Promise<void> {
  const response = await fetch(url, init);
  if (!response.ok || response.type !== 'basic') {
    throw new Error(`precache: ${url}: HTTP ${response.status} ${response.statusText} (${response.type})`);
  }
  const isHtmlFile = /\.html$/.test(new URL(url).pathname);
  if (!isHtmlFile && (response.headers.get('Content-Type') ?? '').includes('text/html')) {
    throw new Error(`precache: ${url}: got an HTML page instead of the file`);
  }
  let received = 0;
  const counted = (response.body ?? new Blob().stream()).pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.byteLength;
        progress?.add(chunk.byteLength);
        controller.enqueue(chunk);
      },
    }),
  );
  const stored = new Headers(response.headers);
  for (const [name, value] of Object.entries(headers)) stored.set(name, value);
  await cache.put(key, new Response(counted, { status: 200, statusText: 'OK', headers: stored }));
  if (received !== expectedBytes) {
    await cache.delete(key);
    throw new Error(
      `precache: ${url}: got ${received} bytes, the build has ${expectedBytes} (a partial or stale download)`,
    );
  }
}

/** A cached copy of `url` at `revision` in an older version's cache, if any. */
async function previousCopy(url: string, revision: string): Promise<Response | undefined> {
  for (const name of await caches.keys()) {
    if (!name.startsWith(APP_CACHE_PREFIX) || name === APP_CACHE) continue;
    const hit = await (await caches.open(name)).match(url);
    if (hit?.headers.get(REVISION_HEADER) === revision) return hit;
  }
  return undefined;
}

async function precacheAppEntry(entry: AppEntry, cache: Cache, progress: Progress): Promise<void> {
  const url = scopeUrl(entry.url);
  const current = await cache.match(url);
  if (current?.headers.get(REVISION_HEADER) === entry.revision) return progress.add(entry.bytes);
  const previous = await previousCopy(url, entry.revision);
  if (previous) {
    await cache.put(url, previous);
    return progress.add(entry.bytes);
  }
  await download(url, url, entry.bytes, cache, progress, { [REVISION_HEADER]: entry.revision });
}

/**
 * A lazy file: copied from an older version or taken from the HTTP cache (the page may have
 * fetched it before this worker controlled it), never downloaded here.
 */
async function precacheLazyEntry(entry: AppEntry, cache: Cache): Promise<void> {
  const url = scopeUrl(entry.url);
  if ((await cache.match(url))?.headers.get(REVISION_HEADER) === entry.revision) return;
  const previous = await previousCopy(url, entry.revision);
  if (previous) return cache.put(url, previous);
  await download(
    url,
    url,
    entry.bytes,
    cache,
    null,
    { [REVISION_HEADER]: entry.revision },
    { cache: 'only-if-cached', mode: 'same-origin' },
  ).catch(() => undefined);
}

async function precacheModelEntry(entry: ModelEntry, cache: Cache, progress: Progress): Promise<void> {
  const url = scopeUrl(entry.url);
  const key = modelCacheKey(new URL(url), entry.sha256);
  if (await cache.match(key)) return progress.add(entry.bytes);
  await download(url, key, entry.bytes, cache, progress, { 'Content-Type': 'application/octet-stream' });
}

/** Runs `tasks` with at most `limit` in flight; rejects with the first failure. */
async function runLimited(tasks: Array<() => Promise<void>>, limit: number): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
}

async function precache(): Promise<void> {
  const total = [...APP_ENTRIES, ...MODEL_ENTRIES].reduce((sum, e) => sum + e.bytes, 0);
  const progress = new Progress(total);
  const appCache = await caches.open(APP_CACHE);
  const modelCache = await caches.open(MODEL_CACHE_NAME);
  // Big model files first: they dominate the time, and the shell is quick after them.
  await runLimited(
    [
      ...MODEL_ENTRIES.map((e) => () => precacheModelEntry(e, modelCache, progress)),
      ...APP_ENTRIES.map((e) => () => precacheAppEntry(e, appCache, progress)),
      ...LAZY_ENTRIES.map((e) => () => precacheLazyEntry(e, appCache)),
    ],
    PARALLEL_DOWNLOADS,
  );
  await progress.post();
}

self.addEventListener('install', (event) => {
  event.waitUntil(precache());
});

// ---- activate -------------------------------------------------------------------------

/** Drops model files of the same URLs at other versions (the runtime does the same when it stores one). */
async function pruneModelCache(): Promise<void> {
  const cache = await caches.open(MODEL_CACHE_NAME);
  const current = new Set(MODEL_ENTRIES.map((e) => modelCacheKey(new URL(scopeUrl(e.url)), e.sha256)));
  for (const request of await cache.keys()) {
    const plain = new URL(request.url);
    plain.searchParams.delete('tiankong-sha256');
    if (modelUrls.has(plain.href) && !current.has(request.url)) await cache.delete(request);
  }
}

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(APP_CACHE_PREFIX) && name !== APP_CACHE) await caches.delete(name);
      }
      await pruneModelCache();
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('message', (event) => {
  const type = (event.data as { type?: string } | null)?.type;
  if (type === 'skip-waiting') void self.skipWaiting();
  else if (type === 'claim') event.waitUntil(self.clients.claim());
});

// ---- fetch ----------------------------------------------------------------------------

/** A copy of `response` carrying the cross-origin-isolation headers. */
function isolated(response: Response): Response {
  if (response.type === 'opaque' || response.type === 'error' || response.status === 0) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(__ISOLATION_HEADERS__)) headers.set(name, value);
  headers.delete(REVISION_HEADER);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** The precache URL a request maps to: the folder URL is its index.html; navigations ignore the query. */
function cacheUrl(request: Request): string {
  const url = new URL(request.url);
  url.hash = '';
  if (request.mode === 'navigate') url.search = '';
  if (url.pathname.endsWith('/')) url.pathname += 'index.html';
  return url.href;
}

async function respond(request: Request): Promise<Response> {
  const url = cacheUrl(request);
  if (appRevisions.has(url)) {
    const cache = await caches.open(APP_CACHE);
    const hit = await cache.match(url);
    if (hit) return isolated(hit);
    const lazy = lazyEntries.get(url);
    if (lazy) {
      // First use of a lazy file: store it (checked like a precached one), then serve the stored copy.
      const stored = await download(url, url, lazy.bytes, cache, null, { [REVISION_HEADER]: lazy.revision }).then(
        () => cache.match(url),
        () => undefined,
      );
      if (stored) return isolated(stored);
    }
  }
  // Not precached (or evicted): the network. Model files are stored by the runtime itself,
  // so nothing is cached here: a response is either precached or passed through.
  return isolated(await fetch(request));
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  if (request.headers.has('Range')) return;
  event.respondWith(respond(request));
});

export {};
