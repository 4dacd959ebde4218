// @ts-check
/**
 * The built package (dist/) served to headless Chromium the way an app's bundler would serve it,
 * and the origin the reliability tests (tests/reliability: network and model faults, soak) and
 * scripts/soak drive it on. Mounts on the one static server (static-server.mjs):
 * - /dist/: dist/, with the bare 'onnxruntime-web/wasm' import of worker.js mapped to
 *   ../ort-js/ort.wasm.min.mjs (ORT's own ESM build), as a bundler or an import map would;
 * - /ort-js/: onnxruntime-web's dist/ folder.
 * The reliability origin adds a blank page at /, model directories under /models/NAME/, and the
 * input grammar at /tests/harness/fill-inputs.mjs (with its /model/tooling/prng.mjs); every
 * response is cross-origin isolated (COOP/COEP/CORP: threads, memory API), every request is
 * logged, and `fail` injects faults.
 *
 * Plain ESM with JSDoc types: scripts/soak runs it in Node without a TypeScript step.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ISOLATION_HEADERS } from '../../web/app/tooling/security-headers.mjs';
import { startStaticServer } from './static-server.mjs';

/**
 * The bytes of `relPath` under `distDir`, or null when it is missing or outside. worker.js gets
 * its bare 'onnxruntime-web/wasm' import mapped to ../ort-js/ort.wasm.min.mjs (ORT's own ESM
 * build, to be served beside dist/), which is what a bundler or an import map does for an app.
 * @param {string} distDir
 * @param {string} relPath
 * @returns {Buffer | string | null}
 */
export function readDistFile(distDir, relPath) {
  const file = normalize(join(distDir, relPath));
  if (!file.startsWith(distDir) || !existsSync(file) || !statSync(file).isFile()) return null;
  const bytes = readFileSync(file);
  if (relPath !== 'worker.js') return bytes;
  return bytes.toString('utf8').replace(`from 'onnxruntime-web/wasm'`, `from '../ort-js/ort.wasm.min.mjs'`);
}

/**
 * /dist/ and /ort-js/ mounts for the static server.
 * @param {{ distDir: string, ortDir: string }} dirs ortDir: onnxruntime-web's dist/ folder
 * @returns {Record<string, import('./static-server.mjs').Mount>}
 */
export function packageMounts({ distDir, ortDir }) {
  return { '/dist/': (rest) => readDistFile(distDir, rest), '/ort-js/': ortDir };
}

const BLANK_PAGE = '<!doctype html><meta charset="utf-8"><title>harness</title>';
const MODEL_FILES = ['model.json', 'model.onnx', 'vocab.txt', 'memory.bin', 'memory-ngrams.bin', 'head.bin'];

/**
 * Starts the reliability origin on 127.0.0.1 (any free port). `models` maps a name to a model
 * directory, served at /models/NAME/.
 * @param {{ distDir: string, ortDir: string, models: Record<string, string> }} options
 * @returns {Promise<import('./static-server.mjs').StaticServer & { models: Record<string, string> }>}
 */
export async function startPackageOrigin({ distDir, ortDir, models }) {
  const server = await startStaticServer({
    mounts: {
      '/': (rest) => (rest === '' ? { body: BLANK_PAGE, type: 'text/html; charset=utf-8' } : null),
      ...packageMounts({ distDir, ortDir }),
      '/models/': (rest) => {
        const [name, file, ...more] = rest.split('/');
        if (more.length > 0 || !Object.hasOwn(models, name) || !MODEL_FILES.includes(file)) return null;
        const path = join(models[name], file);
        return existsSync(path) ? readFileSync(path) : null;
      },
      '/tests/harness/fill-inputs.mjs': fileURLToPath(new URL('fill-inputs.mjs', import.meta.url)),
      '/model/tooling/prng.mjs': fileURLToPath(new URL('../../model/tooling/prng.mjs', import.meta.url)),
    },
    headers: ISOLATION_HEADERS,
    log: true,
  });
  return { ...server, models };
}
