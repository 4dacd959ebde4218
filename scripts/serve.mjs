#!/usr/bin/env node
// @ts-check
/**
 * Serves the built app (web/app/dist) on 127.0.0.1: the security and cross-origin-isolation
 * headers on every response (web/app/tooling/security-headers.mjs), ETag revalidation,
 * content-hashed assets immutable, the precompressed FILE.br / FILE.gz the app build writes beside
 * each compressible file (Content-Encoding, Vary: Accept-Encoding); the static server itself (MIME types for .wasm/.mjs/.onnx, no
 * directory traversal) is the repository's one, tests/harness/static-server.mjs.
 *
 *   node scripts/serve.mjs [DIR]        PORT=8080 node scripts/serve.mjs
 *
 * DIR defaults to web/app/dist; PORT defaults to 5173, and the next free port is used
 * when it is busy (up to 20 tries).
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startStaticServer } from '../tests/harness/static-server.mjs';
import { SECURITY_HEADERS } from '../web/app/tooling/security-headers.mjs';

/**
 * Starts the app's server for `root` (the e2e and security tests start it too). `headers`
 * replaces the security headers (e.g. `{}` to act like a static host that sends none);
 * `onRequest` hears of every answered request. `port` 0 (default) takes any free port; a busy
 * port moves to the next one (20 tries).
 * @param {object} options
 * @param {string} options.root
 * @param {number} [options.port]
 * @param {Record<string, string>} [options.headers]
 * @param {(record: import('../tests/harness/static-server.mjs').RequestRecord) => void} [options.onRequest]
 */
export function startAppServer({ root, port = 0, headers = SECURITY_HEADERS, onRequest }) {
  return startStaticServer({
    mounts: { '/': path.resolve(root) },
    headers,
    caching: 'revalidate',
    precompressed: true,
    port,
    tries: 20,
    onRequest,
  });
}

async function main() {
  const root = path.resolve(process.argv[2] ?? fileURLToPath(new URL('../web/app/dist', import.meta.url)));
  const index = await stat(path.join(root, 'index.html')).catch(() => null);
  if (!index) {
    console.error(`serve: ${root} has no index.html; build the app first (bash scripts/start builds and serves it).`);
    process.exit(1);
  }
  const requested = process.env.PORT ? Number(process.env.PORT) : 5173;
  if (!Number.isInteger(requested) || requested < 0 || requested > 65535) {
    console.error(`serve: PORT must be a port number (0-65535), got "${process.env.PORT}"`);
    process.exit(2);
  }
  const { port } = await startAppServer({ root, port: requested });
  if (port !== requested && requested !== 0) console.log(`serve: port ${requested} is busy, using ${port}`);
  console.log(`tiankong is running at http://127.0.0.1:${port}/  (serving ${root}; Ctrl+C to stop)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((error) => {
    console.error(`serve: ${error.message}`);
    process.exit(1);
  });
}
