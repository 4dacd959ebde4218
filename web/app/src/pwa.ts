/**
 * Service worker life cycle, seen from the page:
 * - first visit: register, show the precache download, wait until the worker controls the
 *   page (so the runtime's files and the model come from Cache Storage, downloaded once);
 * - if the page is not cross-origin isolated (a static host without COOP/COEP headers), reload
 *   once: the worker adds those headers, so the reloaded page can use threads;
 * - later visits: offer a waiting update with a banner; activating it reloads the page.
 */

export interface PrecacheProgress {
  loaded: number;
  total: number;
}

export type ServiceWorkerState =
  /** The worker controls this page: everything it precached is served offline. */
  | 'controlled'
  /** The page is reloading (to become cross-origin isolated). */
  | 'reloading'
  /** No worker for this page load (unsupported, insecure context, failed, or a hard reload). */
  | 'none';

export interface ServiceWorkerHooks {
  onPrecacheProgress(progress: PrecacheProgress): void;
  /** A new version is installed and waiting; call `activate` to switch (the page reloads). */
  onUpdateReady(activate: () => void): void;
  /** Something went wrong with the worker; the page goes on without it. */
  onWarning(message: string): void;
}

const RELOAD_FLAG = 'tiankong-isolation-reload';
const CLAIM_TIMEOUT_MS = 5000;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(what)), ms);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

function whenControlled(): Promise<void> {
  if (navigator.serviceWorker.controller) return Promise.resolve();
  return new Promise((resolve) =>
    navigator.serviceWorker.addEventListener('controllerchange', () => resolve(), { once: true }),
  );
}

/** Resolves when `worker` is activated; rejects when it becomes redundant (its install failed). */
function whenActivated(worker: ServiceWorker): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (worker.state === 'activated') resolve();
      else if (worker.state === 'redundant')
        reject(new Error('the service worker failed to install (see the console of the worker)'));
    };
    worker.addEventListener('statechange', check);
    check();
  });
}

function watchForUpdates(registration: ServiceWorkerRegistration, hooks: ServiceWorkerHooks): void {
  let reloading = false;
  const offer = (worker: ServiceWorker) =>
    hooks.onUpdateReady(() => {
      navigator.serviceWorker.addEventListener('controllerchange', () => {
        if (!reloading) {
          reloading = true;
          location.reload();
        }
      });
      worker.postMessage({ type: 'skip-waiting' });
    });
  if (registration.waiting && navigator.serviceWorker.controller) offer(registration.waiting);
  registration.addEventListener('updatefound', () => {
    const installing = registration.installing;
    installing?.addEventListener('statechange', () => {
      if (installing.state === 'installed' && navigator.serviceWorker.controller) offer(installing);
    });
  });
}

/** Reloads once per tab session when the page is not cross-origin isolated; true when reloading. */
function reloadForIsolation(): boolean {
  if (globalThis.crossOriginIsolated) {
    sessionStorage.removeItem(RELOAD_FLAG);
    return false;
  }
  if (sessionStorage.getItem(RELOAD_FLAG)) return false; // already tried: go on single-threaded
  sessionStorage.setItem(RELOAD_FLAG, '1');
  location.reload();
  return true;
}

/** Registers `sw.js` and waits until it controls the page (see the module comment). */
export async function startServiceWorker(hooks: ServiceWorkerHooks): Promise<ServiceWorkerState> {
  if (!('serviceWorker' in navigator) || !isSecureContext) return 'none';
  const onMessage = (event: MessageEvent) => {
    const data = event.data as { type?: string; loaded?: number; total?: number } | null;
    if (data?.type === 'tiankong-precache')
      hooks.onPrecacheProgress({ loaded: data.loaded ?? 0, total: data.total ?? 0 });
  };
  navigator.serviceWorker.addEventListener('message', onMessage);
  let registration: ServiceWorkerRegistration;
  try {
    registration = await navigator.serviceWorker.register('./sw.js', { scope: './', updateViaCache: 'none' });
  } catch (error) {
    hooks.onWarning(`service worker registration failed: ${String(error)}`);
    return 'none';
  }
  watchForUpdates(registration, hooks);

  if (!navigator.serviceWorker.controller) {
    const worker = registration.installing ?? registration.waiting ?? registration.active;
    try {
      if (worker) await whenActivated(worker);
      // The worker claims pages when it activates; a page loaded while it was already active
      // (e.g. after a hard reload, which bypasses it) asks to be claimed.
      registration.active?.postMessage({ type: 'claim' });
      await withTimeout(whenControlled(), CLAIM_TIMEOUT_MS, 'the service worker did not take control of the page');
    } catch (error) {
      hooks.onWarning(String(error instanceof Error ? error.message : error));
      return 'none';
    } finally {
      navigator.serviceWorker.removeEventListener('message', onMessage);
    }
  }
  return reloadForIsolation() ? 'reloading' : 'controlled';
}
