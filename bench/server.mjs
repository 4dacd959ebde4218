// The benchmark's local origin: one origin serving every contender's files, cross-origin isolated
// (COOP/COEP, so WebAssembly threads work) and uncacheable (so every cold load reads the bytes
// again), on the repository's one static server (tests/harness/static-server.mjs). tiankong's
// dist/ is served as a bundler would serve it (the Worker's bare 'onnxruntime-web/wasm' import
// mapped to ONNX Runtime Web's ESM build: tests/harness/package-origin.mjs).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { packageMounts } from '../tests/harness/package-origin.mjs';
import { startStaticServer } from '../tests/harness/static-server.mjs';
import { ISOLATION_HEADERS } from '../web/app/tooling/security-headers.mjs';

/**
 * Where each URL prefix is served from: tiankong's package, transformers.js, its ORT, the models, the harness.
 * `modelDirs` adds more tiankong models: name → folder, served at /models/NAME/.
 */
export function benchMounts({ repoRoot, tiankongModelDir, transformersModelDir, modelDirs = {} }) {
  const transformers = packageDir(join(repoRoot, 'package.json'), '@huggingface/transformers');
  return {
    '/bench/': join(repoRoot, 'bench', 'pages'),
    ...packageMounts({
      distDir: join(repoRoot, 'dist'),
      ortDir: join(packageDir(join(repoRoot, 'package.json'), 'onnxruntime-web'), 'dist'),
    }),
    '/tjs/': join(transformers, 'dist'),
    // transformers.js bundles its own onnxruntime-web (a newer version than tiankong's): serve that version's wasm.
    '/tjs-ort/': join(packageDir(join(transformers, 'package.json'), 'onnxruntime-web'), 'dist'),
    '/models/tiankong/': tiankongModelDir,
    '/models/tjs/bert-bench/': transformersModelDir,
    ...Object.fromEntries(Object.entries(modelDirs).map(([name, dir]) => [`/models/${name}/`, dir])),
  };
}

/** The folder of package `name` as Node resolves it from `fromFile` (its exports hide package.json). */
function packageDir(fromFile, name) {
  let dir = dirname(createRequire(fromFile).resolve(name));
  while (
    !existsSync(join(dir, 'package.json')) ||
    JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== name
  ) {
    if (dirname(dir) === dir) throw new Error(`cannot find the package folder of ${name}`);
    dir = dirname(dir);
  }
  return dir;
}

/**
 * Starts the benchmark's origin on 127.0.0.1 (any free port) with `mounts` (URL prefix → folder).
 * Every answered request is passed to `onRequest({ path, status, bytes, ... })`.
 * @param {Record<string, import('../tests/harness/static-server.mjs').Mount>} mounts
 * @param {{ onRequest?: (record: import('../tests/harness/static-server.mjs').RequestRecord) => void }} [options]
 */
export function startBenchServer(mounts, { onRequest } = {}) {
  return startStaticServer({ mounts, headers: ISOLATION_HEADERS, onRequest });
}
