/**
 * The core as the runtime loads it (the engine, `createTokenizer`): always the single-threaded
 * build, and a failure is a TiankongError.
 */
import { TiankongError, describe } from '../errors.js';
import { type EmscriptenFactory, type LoadedCore, folderUrl, startCore } from './start-core.js';
import singleCore from './wasm/tiankong-core.mjs';

/** Not a literal at the call site: bundlers would try to emit the folder itself. */
const WASM_FOLDER = './wasm/';

/**
 * Loads the C++ core for an engine. Always the single-threaded build: the core's work
 * (tokenize, top-k) runs on one thread, so the pthread build would only add idle workers
 * (inference threads belong to ONNX Runtime). Its loader is a static import and its wasm a
 * literal URL, so bundlers emit both and the Worker stays one chunk; `baseUrl` overrides where
 * the files are. Rejects with UNSUPPORTED when the build cannot be loaded.
 */
export async function loadEngineCore(baseUrl?: string): Promise<LoadedCore> {
  const reason = 'tokenize and top-k run on one thread; ONNX Runtime owns the inference threads';
  try {
    if (baseUrl) {
      const folder = folderUrl(baseUrl, import.meta.url);
      const { default: factory } = (await import(/* @vite-ignore */ new URL('tiankong-core.mjs', folder).href)) as {
        default: EmscriptenFactory;
      };
      return await startCore(factory, { variant: 'single', reason }, {}, folder);
    }
    return await startCore(
      singleCore,
      { variant: 'single', reason },
      { 'tiankong-core.wasm': new URL('./wasm/tiankong-core.wasm', import.meta.url) },
      new URL(WASM_FOLDER, import.meta.url),
    );
  } catch (error) {
    throw new TiankongError('UNSUPPORTED', `tiankong: the WebAssembly core failed to load: ${describe(error)}`);
  }
}
