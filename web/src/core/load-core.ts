/**
 * Loads the tiankong C++ core (Embind module) in browsers, workers and Node.
 *
 * Two builds of the same sources sit in `wasm/` next to this file (scripts/build-wasm):
 *   tiankong-core-threads.{mjs,wasm,worker.js}  SIMD + pthreads; needs SharedArrayBuffer
 *   tiankong-core.{mjs,wasm}                     SIMD, single thread; works everywhere
 * `wasm/` holds a `{"type":"commonjs"}` package.json because Emscripten's pthread worker
 * is CommonJS; the loaders are .mjs so they stay ES modules regardless.
 *
 * Every file is named by a literal `import('./wasm/….mjs')` or `new URL('./wasm/…',
 * import.meta.url)`, so bundlers (Vite, webpack 5, Rollup, esbuild with its asset loaders) find
 * and emit them without configuration. Only an explicit `baseUrl` loads them from elsewhere.
 */
import {
  type CoreVariant,
  type EmscriptenFactory,
  type LoadCoreOptions,
  type LoadedCore,
  chooseVariant,
  detectEnvironment,
  folderUrl,
  startCore,
} from './start-core.js';

export { COOP_COEP_HINT, chooseVariant, detectEnvironment, startCore } from './start-core.js';
export type {
  CoreEnvironment,
  CoreVariant,
  EmscriptenFactory,
  LoadCoreOptions,
  LoadedCore,
  VariantChoice,
} from './start-core.js';

/** Not a literal at the call site: bundlers would try to emit the folder itself. */
const WASM_FOLDER = './wasm/';

const BUILD_FILES: Record<CoreVariant, string> = {
  threads: 'tiankong-core-threads.mjs',
  single: 'tiankong-core.mjs',
};

/** Each build's loader and files, as literal patterns bundlers see. */
const BUILDS: Record<CoreVariant, { load(): Promise<{ default: EmscriptenFactory }>; files(): Record<string, URL> }> = {
  single: {
    load: () => import('./wasm/tiankong-core.mjs'),
    files: () => ({ 'tiankong-core.wasm': new URL('./wasm/tiankong-core.wasm', import.meta.url) }),
  },
  threads: {
    load: () => import('./wasm/tiankong-core-threads.mjs'),
    files: () => ({
      'tiankong-core-threads.wasm': new URL('./wasm/tiankong-core-threads.wasm', import.meta.url),
      'tiankong-core-threads.worker.js': new URL('./wasm/tiankong-core-threads.worker.js', import.meta.url),
    }),
  },
};

/** Loads one build of the core. */
export async function loadCore(options: LoadCoreOptions = {}): Promise<LoadedCore> {
  const choice = chooseVariant(detectEnvironment(), options.variant ?? 'auto');
  if (choice.warning) (options.onWarning ?? console.warn)(choice.warning);
  const build = BUILDS[choice.variant];
  const folder = options.baseUrl === undefined ? null : folderUrl(options.baseUrl, import.meta.url);
  const loaderUrl = folder
    ? new URL(BUILD_FILES[choice.variant], folder).href
    : `./wasm/${BUILD_FILES[choice.variant]}`;
  let factory: EmscriptenFactory;
  try {
    // An explicit baseUrl is a runtime URL (the bundler cannot know it); the default is a literal import.
    factory = (
      folder ? ((await import(/* @vite-ignore */ loaderUrl)) as { default: EmscriptenFactory }) : await build.load()
    ).default;
  } catch (error) {
    throw new Error(
      `tiankong: cannot load the ${choice.variant} core from ${loaderUrl} (run scripts/build-wasm?): ${String(error)}`,
      { cause: error },
    );
  }
  return startCore(factory, choice, folder ? {} : build.files(), folder ?? new URL(WASM_FOLDER, import.meta.url));
}
