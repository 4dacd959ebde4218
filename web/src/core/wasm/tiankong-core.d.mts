// Type of the Emscripten loader that scripts/build-wasm writes to dist/core/wasm/ (built from wasm/,
// not compiled from here): load-core.ts imports it by a literal path so that bundlers find it.
import type { CoreModule } from '../core-module.js';

declare const factory: (moduleArg: {
  locateFile(path: string, scriptDirectory: string): string;
}) => Promise<CoreModule>;
export default factory;
