/**
 * Starting a build of the tiankong C++ core (Embind module) once its Emscripten factory is
 * loaded: which build an environment can run (chooseVariant), and where its files are
 * (locateFile). No dynamic import here: the Worker's module graph (engine-core.ts) imports this
 * and must stay one chunk for bundlers that build workers as classic scripts (Vite's default).
 * load-core.ts loads either build; engine-core.ts the single-threaded one.
 */
import type { CoreModule } from './core-module.js';

export type CoreVariant = 'threads' | 'single';

export interface LoadCoreOptions {
  /** 'auto' (default) picks 'threads' when SharedArrayBuffer can be shared, else 'single'. */
  variant?: CoreVariant | 'auto';
  /** Folder (URL) holding the wasm builds. Default: `./wasm/` next to this module. */
  baseUrl?: string | URL;
  /** Receives the explanation when 'auto' has to fall back to one thread. Default: console.warn. */
  onWarning?: (message: string) => void;
}

export interface LoadedCore {
  module: CoreModule;
  variant: CoreVariant;
  /** Why this variant was loaded, in words. */
  reason: string;
  /** Ends the pthread workers (Node would otherwise keep running). Do not use `module` afterwards. */
  dispose(): void;
}

/** What the variant choice depends on; `detectEnvironment()` reads it from globalThis. */
export interface CoreEnvironment {
  isNode: boolean;
  crossOriginIsolated: boolean;
  hasSharedArrayBuffer: boolean;
}

export interface VariantChoice {
  variant: CoreVariant;
  reason: string;
  /** Set when threads would be possible with a different server configuration. */
  warning?: string;
}

export const COOP_COEP_HINT =
  'serve the page with the headers "Cross-Origin-Opener-Policy: same-origin" and ' +
  '"Cross-Origin-Embedder-Policy: require-corp" to enable threads';

/** Reads the environment the variant choice depends on from globalThis. */
export function detectEnvironment(): CoreEnvironment {
  const g = globalThis as { process?: { versions?: { node?: string } }; crossOriginIsolated?: boolean };
  return {
    isNode: typeof g.process?.versions?.node === 'string',
    crossOriginIsolated: g.crossOriginIsolated === true,
    hasSharedArrayBuffer: typeof SharedArrayBuffer === 'function',
  };
}

/** Picks the build for an environment. Pure, so the policy is testable. */
export function chooseVariant(env: CoreEnvironment, requested: CoreVariant | 'auto' = 'auto'): VariantChoice {
  const threadsUsable = env.hasSharedArrayBuffer && (env.isNode || env.crossOriginIsolated);
  if (requested === 'single') return { variant: 'single', reason: 'single-threaded build requested' };
  if (requested === 'threads') {
    if (!threadsUsable) {
      throw new Error(
        `tiankong: the threaded core needs SharedArrayBuffer, which this page cannot use; ${COOP_COEP_HINT}`,
      );
    }
    return { variant: 'threads', reason: 'threaded build requested' };
  }
  if (threadsUsable) {
    return {
      variant: 'threads',
      reason: env.isNode ? 'Node.js: worker threads and SharedArrayBuffer available' : 'page is cross-origin isolated',
    };
  }
  const why =
    env.isNode || env.crossOriginIsolated
      ? 'SharedArrayBuffer is unavailable'
      : 'the page is not cross-origin isolated';
  return {
    variant: 'single',
    reason: `${why}: using the single-threaded build`,
    warning: `tiankong: ${why}, so the single-threaded core is loaded; ${COOP_COEP_HINT}.`,
  };
}

export type EmscriptenFactory = (moduleArg: {
  locateFile(path: string, scriptDirectory: string): string;
}) => Promise<CoreModule>;

/**
 * Runs `factory` with its files at `files` (name → URL; other names resolve against `folder`).
 * Emscripten reads files with fs in Node (wants a path) and with fetch elsewhere (a URL).
 */
export async function startCore(
  factory: EmscriptenFactory,
  choice: { variant: CoreVariant; reason: string },
  files: Record<string, URL>,
  folder: URL,
): Promise<LoadedCore> {
  const env = detectEnvironment();
  const locate = (file: string): string => {
    const url = files[file] ?? new URL(file, folder);
    return env.isNode && url.protocol === 'file:' ? decodeURIComponent(url.pathname) : url.href;
  };
  let module: CoreModule;
  try {
    module = await factory({ locateFile: (path) => locate(path) });
  } catch (error) {
    throw new Error(`tiankong: the ${choice.variant} core failed to start (${locate('')}): ${String(error)}`, {
      cause: error,
    });
  }
  return {
    module,
    variant: choice.variant,
    reason: choice.reason,
    dispose() {
      (module as { PThread?: { terminateAllThreads(): void } }).PThread?.terminateAllThreads();
    },
  };
}

/** A folder URL (with a trailing slash) from a URL or string, resolved against `base`. */
export function folderUrl(url: string | URL, base: string | URL): URL {
  const resolved = new URL(url, base);
  return resolved.href.endsWith('/') ? resolved : new URL(`${resolved.href}/`);
}
