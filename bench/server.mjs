// The benchmark's local web server: one origin serving every contender's files, cross-origin
// isolated (COOP/COEP, so WebAssembly threads work) and uncacheable (so every cold load reads
// the bytes again). It plays the bundler's role for tiankong's Worker (the bare specifier
// 'onnxruntime-web/wasm' maps to ONNX Runtime Web's ESM build, as Vite or an import map would).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize, sep } from 'node:path';

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json', '.txt': 'text/plain; charset=utf-8', '.onnx': 'application/octet-stream',
};

/** Where each URL prefix is served from: tiankong's package, transformers.js, its ORT, the models, the harness. */
export function benchMounts({ repoRoot, tiankongModelDir, transformersModelDir }) {
  const transformers = packageDir(join(repoRoot, 'package.json'), '@huggingface/transformers');
  return {
    '/bench/': join(repoRoot, 'bench', 'pages'),
    '/dist/': join(repoRoot, 'dist'),
    '/ort-js/': join(packageDir(join(repoRoot, 'package.json'), 'onnxruntime-web'), 'dist'),
    '/tjs/': join(transformers, 'dist'),
    // transformers.js bundles its own onnxruntime-web (a newer version than tiankong's): serve that version's wasm.
    '/tjs-ort/': join(packageDir(join(transformers, 'package.json'), 'onnxruntime-web'), 'dist'),
    '/models/tiankong/': tiankongModelDir,
    '/models/tjs/bert-bench/': transformersModelDir,
  };
}

/** The folder of package `name` as Node resolves it from `fromFile` (its exports hide package.json). */
function packageDir(fromFile, name) {
  let dir = dirname(createRequire(fromFile).resolve(name));
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== name) {
    if (dirname(dir) === dir) throw new Error(`cannot find the package folder of ${name}`);
    dir = dirname(dir);
  }
  return dir;
}

/**
 * Starts the server on 127.0.0.1 (any free port). Every answered request is passed to
 * `onRequest(path, status, bytes)`.
 * @returns {Promise<{origin: string, close(): Promise<void>}>}
 */
export async function startBenchServer(mounts, { onRequest = () => {} } = {}) {
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
    const finish = (status, body = '', type = 'text/plain; charset=utf-8') => {
      response.writeHead(status, {
        'Content-Type': type, 'Cache-Control': 'no-store',
        'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp',
        'Cross-Origin-Resource-Policy': 'same-origin',
      }).end(body);
      onRequest(path, status, body.length);
    };
    const prefix = Object.keys(mounts).find((p) => path.startsWith(p));
    if (!prefix) return finish(404, `no route for ${path}\n`);
    const root = mounts[prefix];
    const file = normalize(join(root, path.slice(prefix.length)));
    if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) return finish(404, `not found: ${path}\n`);
    let body = readFileSync(file);
    if (path === '/dist/worker.js') {
      body = body.toString('utf8').replace(`from 'onnxruntime-web/wasm'`, `from '/ort-js/ort.wasm.min.mjs'`);
    }
    finish(200, body, MIME[extname(file)] ?? 'application/octet-stream');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
