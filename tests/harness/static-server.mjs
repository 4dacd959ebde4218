// @ts-check
/**
 * The one static HTTP server of the repository, on 127.0.0.1: the app server (scripts/serve.mjs),
 * the benchmarks (bench/run.mjs, bench/memory-bench.mjs) and the browser tests and soak runs
 * (tests/harness/package-origin.mjs, route-server.ts, tests/e2e, tests/reliability) are each a
 * set of mounts and headers on it.
 *
 * - mounts: a URL prefix (ending in '/') maps to a folder, or to a function of the rest of the
 *   path; any other key is one exact path, mapped to a file or a function;
 * - `headers` go on every response, errors included (the app's security headers, the isolation
 *   headers COOP/COEP/CORP, or per path);
 * - one MIME table; `caching`: 'no-store' (every load reads the bytes again: tests, benchmarks) or
 *   'revalidate' (ETag + If-None-Match → 304, `no-cache`, content-hashed assets/ immutable: the app);
 * - no way out of a mounted folder (`..` in any spelling, encoded separators, NUL → 400);
 * - `precompressed`: a folder file with a `.br` or `.gz` sibling is sent as that sibling
 *   (Content-Encoding br/gzip, Vary: Accept-Encoding) to a client that accepts it;
 * - fault injection: `fail(path, fault, times)` makes the next request(s) of a path drop the
 *   connection after N bytes, answer with an HTML page (as text/html or disguised), an error
 *   status, or a short body; `log` (option) keeps "GET /path 200 (note)" for every request.
 *
 * Plain ESM with JSDoc types: scripts/serve.mjs, scripts/soak and the benchmarks run it in Node
 * without a TypeScript step.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';

/**
 * What a function mount answers: the body (typed by the path's extension), a body with its own
 * type, or null (404).
 * @typedef {Buffer | string | { body: Buffer | string, type: string } | null} RouteAnswer
 */
/**
 * A folder (prefix key) or a file (exact key), or a function of the rest of the path after the
 * key (decoded, no dot segments; '' for an exact key).
 * @typedef {string | ((rest: string) => RouteAnswer)} Mount
 */
/**
 * An injected failure: drop the connection after `drop` bytes; answer an HTML page with
 * Content-Type `html`; answer status `status`; or send only `short` bytes (no Content-Length).
 * @typedef {{ drop: number } | { html: string } | { status: number } | { short: number }} Fault
 */
/**
 * One answered request, as `onRequest` gets it.
 * @typedef {object} RequestRecord
 * @property {string} method
 * @property {string} url the request's URL as sent (with its query)
 * @property {string} path the decoded path
 * @property {number} status
 * @property {number} bytes body bytes sent (or announced, for a stream)
 * @property {string} note what a fault did, else ''
 */
/**
 * @typedef {object} StaticServer
 * @property {string} origin e.g. http://127.0.0.1:41234
 * @property {number} port
 * @property {import('node:http').Server} server
 * @property {string[]} log "METHOD /path STATUS (note)" per request, when started with `log: true`
 * @property {(path: string, fault: Fault, times?: number) => void} fail the next `times` (default 1) requests of `path` fail
 * @property {() => Promise<void>} close closes open connections too
 */

/** Content types by file extension; anything else is served as opaque bytes. */
export const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.bin': 'application/octet-stream',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.map': 'application/json; charset=utf-8',
};

/**
 * MIME type for a file name.
 * @param {string} fileName
 * @returns {string}
 */
export function mimeType(fileName) {
  return (
    /** @type {Record<string, string>} */ (MIME_TYPES)[path.extname(fileName).toLowerCase()] ??
    'application/octet-stream'
  );
}

/**
 * The decoded path of a request URL, or null when it is malformed or could leave a folder
 * (NUL, a backslash, or a `.`/`..` segment after decoding). Literal dot segments are resolved
 * by URL parsing first, so they clamp at the root.
 * @param {string} requestUrl
 * @returns {string | null}
 */
function decodeRequestPath(requestUrl) {
  let pathname;
  try {
    pathname = decodeURIComponent(new URL(requestUrl, 'http://localhost').pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0') || pathname.includes('\\')) return null;
  if (pathname.split('/').some((s) => s === '..' || s === '.')) return null;
  return pathname;
}

/**
 * Maps a request path to a file under `root`, or null when it is malformed or escapes `root`
 * (`..`, encoded separators, NUL). Directories (a trailing '/') map to their index.html.
 * @param {string} root
 * @param {string} requestUrl
 * @returns {string | null}
 */
export function resolveRequestPath(root, requestUrl) {
  const decoded = decodeRequestPath(requestUrl);
  return decoded === null ? null : fileUnder(root, decoded);
}

/**
 * @param {string} root
 * @param {string} rest a decoded path without dot segments
 */
function fileUnder(root, rest) {
  const segments = rest.split('/').filter((s) => s !== '');
  const file = path.join(root, ...segments);
  const relative = path.relative(root, file);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return null;
  return rest.endsWith('/') || segments.length === 0 ? path.join(file, 'index.html') : file;
}

const HTML_PAGE = '<!doctype html><html><head><title>app</title></head><body>index.html fallback</body></html>';

/**
 * Starts the server on 127.0.0.1.
 * @param {object} options
 * @param {Record<string, Mount>} options.mounts the longest matching key wins
 * @param {Record<string, string> | ((path: string) => Record<string, string>)} [options.headers] on every response
 * @param {'no-store' | 'revalidate'} [options.caching]
 * @param {number} [options.port] 0 (default): any free port
 * @param {number} [options.tries] ports to try from `port` up while they are busy (default 1)
 * @param {boolean} [options.log] keep the request log (`log` of the result)
 * @param {boolean} [options.precompressed] send FILE.br / FILE.gz for FILE when the client accepts it
 * @param {(record: RequestRecord) => void} [options.onRequest] called once per answered request
 * @returns {Promise<StaticServer>}
 */
export async function startStaticServer({
  mounts,
  headers = {},
  caching = 'no-store',
  port = 0,
  tries = 1,
  log: keepLog = false,
  precompressed = false,
  onRequest = () => {},
}) {
  const prefixes = Object.keys(mounts).sort((a, b) => b.length - a.length);
  const headersFor = typeof headers === 'function' ? headers : () => headers;
  /** @type {string[]} */
  const log = [];
  /** @type {Map<string, { fault: Fault, times: number }>} */
  const faults = new Map();

  const server = createServer((request, response) => {
    answer(request, response).catch((error) => {
      if (!response.headersSent)
        response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${error}\n`);
      else response.destroy();
    });
  });

  /**
   * @param {import('node:http').IncomingMessage} request
   * @param {import('node:http').ServerResponse} response
   */
  async function answer(request, response) {
    const method = request.method ?? 'GET';
    const url = request.url ?? '/';
    const decoded = decodeRequestPath(url);
    const where = decoded ?? new URL(url, 'http://localhost').pathname;
    const base = headersFor(where);
    /** @param {number} status @param {number} bytes @param {string} [note] */
    const record = (status, bytes, note = '') => {
      if (keepLog) log.push(`${method} ${where} ${status}${note}`);
      onRequest({ method, url, path: where, status, bytes, note });
    };
    /** @param {number} status @param {string} [text] @param {Record<string, string | number>} [extra] */
    const finish = (status, text, extra = {}) => {
      response.writeHead(status, { ...base, 'Content-Type': 'text/plain; charset=utf-8', ...extra });
      response.end(method === 'HEAD' ? undefined : text);
      record(status, text?.length ?? 0);
    };
    if (method !== 'GET' && method !== 'HEAD') return finish(405, 'method not allowed\n', { Allow: 'GET, HEAD' });
    if (decoded === null) return finish(400, 'bad path\n');

    const key = prefixes.find((k) => (k.endsWith('/') ? decoded.startsWith(k) : decoded === k));
    const mount = key === undefined ? undefined : mounts[key];
    const rest = key === undefined ? '' : decoded.slice(key.length);
    /** @type {{ body: Buffer, type: string } | { file: string, size: number, mtimeMs: number, root: string } | null} */
    let found = null;
    if (typeof mount === 'function') {
      const routed = mount(rest);
      if (routed !== null) {
        const body = typeof routed === 'string' || Buffer.isBuffer(routed) ? routed : routed.body;
        const type = typeof routed === 'string' || Buffer.isBuffer(routed) ? mimeType(decoded) : routed.type;
        found = { body: Buffer.isBuffer(body) ? body : Buffer.from(body), type };
      }
    } else if (typeof mount === 'string') {
      const isFolder = /** @type {string} */ (key).endsWith('/');
      let file = isFolder ? fileUnder(mount, rest) : mount;
      if (file === null) return finish(400, 'bad path\n');
      let info = await stat(file).catch(() => null);
      if (info?.isDirectory()) {
        file = path.join(file, 'index.html');
        info = await stat(file).catch(() => null);
      }
      if (info?.isFile())
        found = { file, size: info.size, mtimeMs: info.mtimeMs, root: isFolder ? mount : path.dirname(mount) };
    }
    if (found === null) return finish(404, 'not found\n');

    const type = 'body' in found ? found.type : mimeType(found.file);
    const fault = faults.get(decoded);
    if (fault && fault.times > 0) {
      fault.times--;
      const body = 'body' in found ? found.body : await readFile(found.file);
      return inject(
        fault.fault,
        body,
        { ...base, 'Content-Type': type, 'Cache-Control': 'no-store' },
        response,
        record,
      );
    }

    /** @type {Record<string, string | number>} */
    const out = { ...base, 'Content-Type': type };
    if (precompressed && 'file' in found) {
      out.Vary = 'Accept-Encoding';
      const variant = await compressedVariant(found.file, String(request.headers['accept-encoding'] ?? ''));
      if (variant) {
        out['Content-Encoding'] = variant.encoding;
        found = { ...found, file: variant.file, size: variant.size, mtimeMs: variant.mtimeMs };
      }
    }
    if (caching === 'no-store' || 'body' in found)
      out['Cache-Control'] = caching === 'no-store' ? 'no-store' : 'no-cache';
    if ('file' in found && caching === 'revalidate') {
      out['Cache-Control'] = path.relative(found.root, found.file).startsWith(`assets${path.sep}`)
        ? 'public, max-age=31536000, immutable'
        : 'no-cache';
      out.ETag = `"${found.size.toString(16)}-${Math.floor(found.mtimeMs).toString(16)}${out['Content-Encoding'] ? `-${out['Content-Encoding']}` : ''}"`;
      if (request.headers['if-none-match'] === out.ETag) {
        response.writeHead(304, out).end();
        return record(304, 0);
      }
    }
    const size = 'body' in found ? found.body.length : found.size;
    response.writeHead(200, { ...out, 'Content-Length': size });
    if (method === 'HEAD') {
      response.end();
      return record(200, 0);
    }
    if ('body' in found) {
      response.end(found.body);
      return record(200, size);
    }
    createReadStream(found.file)
      .on('error', () => response.destroy())
      .on('end', () => record(200, size))
      .pipe(response);
  }

  const got = await listen(server, port, tries);
  return {
    origin: `http://127.0.0.1:${got}`,
    port: got,
    server,
    log,
    fail(urlPath, fault, times = 1) {
      faults.set(urlPath, { fault, times });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The precompressed sibling of `file` (FILE.br, else FILE.gz) that `acceptEncoding` allows, or null.
 * @param {string} file
 * @param {string} acceptEncoding the request's Accept-Encoding header
 * @returns {Promise<{ encoding: string, file: string, size: number, mtimeMs: number } | null>}
 */
async function compressedVariant(file, acceptEncoding) {
  const accepted = new Set();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    if (name && !(q && Number(q.slice(2)) === 0)) accepted.add(name);
  }
  for (const [encoding, suffix] of [
    ['br', '.br'],
    ['gzip', '.gz'],
  ]) {
    if (!accepted.has(encoding)) continue;
    const info = await stat(file + suffix).catch(() => null);
    if (info?.isFile()) return { encoding, file: file + suffix, size: info.size, mtimeMs: info.mtimeMs };
  }
  return null;
}

/**
 * Answers one request with `fault` instead of `body`.
 * @param {Fault} fault
 * @param {Buffer} body
 * @param {Record<string, string>} headers
 * @param {import('node:http').ServerResponse} response
 * @param {(status: number, bytes: number, note?: string) => void} record
 */
function inject(fault, body, headers, response, record) {
  if ('status' in fault) {
    record(fault.status, 0, ' (injected)');
    response.writeHead(fault.status, { ...headers, 'Content-Type': 'text/plain' }).end('injected failure');
  } else if ('html' in fault) {
    record(200, HTML_PAGE.length, ` (injected HTML as ${fault.html})`);
    response.writeHead(200, { ...headers, 'Content-Type': fault.html }).end(HTML_PAGE);
  } else if ('drop' in fault) {
    record(200, fault.drop, ` (connection dropped after ${fault.drop} of ${body.length} bytes)`);
    response.writeHead(200, { ...headers, 'Content-Length': body.length });
    response.write(body.subarray(0, fault.drop), () => setTimeout(() => response.socket?.destroy(), 50));
  } else {
    record(200, fault.short, ` (short body: ${fault.short} of ${body.length} bytes, no Content-Length)`);
    response.writeHead(200, headers); // chunked: the short body ends cleanly
    response.end(body.subarray(0, fault.short));
  }
}

/**
 * Listens on 127.0.0.1:`port`, moving to the next port while it is in use (`tries` ports in
 * all; port 0 = any free port). Resolves to the port it got.
 * @param {import('node:http').Server} server
 * @param {number} port
 * @param {number} tries
 * @returns {Promise<number>}
 */
function listen(server, port, tries) {
  return new Promise((resolve, reject) => {
    /** @param {number} candidate @param {number} left */
    const attempt = (candidate, left) => {
      /** @param {NodeJS.ErrnoException} error */
      const onError = (error) => {
        server.off('listening', onListening);
        if (error.code === 'EADDRINUSE' && left > 1 && candidate !== 0) attempt(candidate + 1, left - 1);
        else reject(error);
      };
      const onListening = () => {
        server.off('error', onError);
        resolve(/** @type {import('node:net').AddressInfo} */ (server.address()).port);
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(candidate, '127.0.0.1');
    };
    attempt(port, tries);
  });
}
