#!/usr/bin/env node
/**
 * Tiny static server for the built app (web/app/dist): 127.0.0.1 only, security and
 * cross-origin-isolation headers on every response (web/app/tooling/security-headers.mjs),
 * correct MIME types for .wasm/.mjs/.onnx, ETag revalidation, no directory traversal.
 *
 *   node scripts/serve.mjs [DIR]        PORT=8080 node scripts/serve.mjs
 *
 * DIR defaults to web/app/dist; PORT defaults to 5173, and the next free port is used
 * when it is busy (up to 20 tries).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SECURITY_HEADERS } from '../web/app/tooling/security-headers.mjs';

const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.map': 'application/json; charset=utf-8',
};

/** MIME type for a file name; unknown extensions are served as opaque bytes. */
export function mimeType(fileName) {
  return MIME_TYPES[path.extname(fileName).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Maps a request path to a file under `root`, or null when it is malformed or escapes
 * `root` (`..`, encoded separators, NUL). Directories map to their index.html.
 */
export function resolveRequestPath(root, requestUrl) {
  let pathname;
  try {
    pathname = decodeURIComponent(new URL(requestUrl, 'http://localhost').pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0') || pathname.includes('\\')) return null;
  const segments = pathname.split('/').filter((s) => s !== '');
  if (segments.some((s) => s === '..' || s === '.')) return null;
  const file = path.join(root, ...segments);
  const relative = path.relative(root, file);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return null;
  return pathname.endsWith('/') || segments.length === 0 ? path.join(file, 'index.html') : file;
}

/** Cache policy: content-hashed Vite assets never change; everything else revalidates. */
function cacheControl(relativePath) {
  return relativePath.startsWith(`assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache';
}

/**
 * Creates (does not start) the static server for `root`. `onRequest(method, url, status)`
 * is called once per answered request (the e2e tests record what reached the server).
 * `headers` replaces the security headers (e.g. `{}` to act like a static host that sends none).
 */
export function createStaticServer({ root, onRequest = () => {}, headers: baseHeaders = SECURITY_HEADERS }) {
  const absoluteRoot = path.resolve(root);
  return createServer(async (req, res) => {
    const finish = (status, body, headers = {}) => {
      res.writeHead(status, { ...baseHeaders, 'Content-Type': 'text/plain; charset=utf-8', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
      onRequest(req.method, req.url, status);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return finish(405, 'method not allowed\n', { Allow: 'GET, HEAD' });
    let file = resolveRequestPath(absoluteRoot, req.url ?? '/');
    if (!file) return finish(400, 'bad path\n');
    let info = await stat(file).catch(() => null);
    if (info?.isDirectory()) {
      file = path.join(file, 'index.html');
      info = await stat(file).catch(() => null);
    }
    if (!info?.isFile()) return finish(404, 'not found\n');

    const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
    const headers = {
      'Content-Type': mimeType(file),
      'Cache-Control': cacheControl(path.relative(absoluteRoot, file)),
      ETag: etag,
    };
    if (req.headers['if-none-match'] === etag) return finish(304, undefined, headers);
    res.writeHead(200, { ...baseHeaders, ...headers, 'Content-Length': info.size });
    if (req.method === 'HEAD') {
      res.end();
      onRequest(req.method, req.url, 200);
      return;
    }
    createReadStream(file)
      .on('error', () => res.destroy())
      .on('end', () => onRequest(req.method, req.url, 200))
      .pipe(res);
  });
}

/**
 * Listens on 127.0.0.1:`port`, moving to the next port while it is in use (`tries` ports
 * in all; port 0 = any free port). Resolves to the port it got.
 */
export function listen(server, port, tries = 20) {
  return new Promise((resolve, reject) => {
    const attempt = (candidate, left) => {
      const onError = (error) => {
        server.off('listening', onListening);
        if (error.code === 'EADDRINUSE' && left > 1 && candidate !== 0) attempt(candidate + 1, left - 1);
        else reject(error);
      };
      const onListening = () => {
        server.off('error', onError);
        resolve(server.address().port);
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(candidate, '127.0.0.1');
    };
    attempt(port, tries);
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
  const server = createStaticServer({ root });
  const port = await listen(server, requested);
  if (port !== requested && requested !== 0) console.log(`serve: port ${requested} is busy, using ${port}`);
  console.log(`tiankong is running at http://127.0.0.1:${port}/  (serving ${root}; Ctrl+C to stop)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((error) => {
    console.error(`serve: ${error.message}`);
    process.exit(1);
  });
}
