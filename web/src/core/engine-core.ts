/**
 * The core as the runtime loads it (the engine, `createTokenizer`): always the single-threaded
 * build, and a failure is a TiankongError.
 */
import { TiankongError, describe } from '../errors.js';
import { type LoadedCore, loadCore } from './load-core.js';

/**
 * Loads the C++ core for an engine. Always the single-threaded build: the core's work
 * (tokenize, top-k) runs on one thread, so the pthread build would only add idle workers
 * (inference threads belong to ONNX Runtime). `baseUrl` overrides where its files are.
 * Rejects with UNSUPPORTED when the build cannot be loaded.
 */
export async function loadEngineCore(baseUrl?: string): Promise<LoadedCore> {
  try {
    const core = await loadCore({ variant: 'single', ...(baseUrl ? { baseUrl } : {}) });
    return { ...core, reason: 'tokenize and top-k run on one thread; ONNX Runtime owns the inference threads' };
  } catch (error) {
    throw new TiankongError('UNSUPPORTED', `tiankong: the WebAssembly core failed to load: ${describe(error)}`);
  }
}
