/**
 * Browser-test plumbing shared by the suites that drive headless Chromium: launchChromium (the
 * flags that work here), startRouteServer (a tiny static server with or without cross-origin
 * isolation), readDistFile (dist/ as a bundler would serve it) and startFaultServer:
 *
 * A local origin for driving the built browser entry (dist/browser.js → Worker) in headless
 * Chromium, with fault injection: used by tests/reliability (network and model faults, soak)
 * and scripts/soak. The server
 * - serves dist/ under /dist/ (the bare 'onnxruntime-web/wasm' import of worker.js mapped to
 *   ORT's own ESM build, as a bundler or import map would), a blank page at /, model
 *   directories under /models/NAME/ and the input grammar at /lib/fill-inputs.mjs (with its /model/tooling/prng.mjs);
 * - sends COOP/COEP/CORP on everything, so pages are cross-origin isolated (threads, memory API);
 * - logs every request ("GET /models/ok/model.onnx 200") and can be told to fail the next
 *   request(s) of a path: drop the connection after N bytes, answer with an HTML page (as
 *   text/html or disguised as application/octet-stream), an error status, or a short body.
 */
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';

/** Debian's Chromium (apt-get install chromium). */
export const CHROMIUM = '/usr/bin/chromium';
export const MIME = {
  '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json', '.txt': 'text/plain; charset=utf-8', '.onnx': 'application/octet-stream',
  '.map': 'application/json',
};
const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};
const BLANK_PAGE = Buffer.from('<!doctype html><meta charset="utf-8"><title>harness</title>');
const HTML_PAGE = '<!doctype html><html><head><title>app</title></head><body>index.html fallback</body></html>';

/**
 * Starts the server on 127.0.0.1 (any free port). `models` maps a name to a model directory.
 * Resolves to { origin, log, fail(path, fault, times = 1), models, close() }; `fault` is one of
 * { drop: BYTES } | { html: 'text/html' | 'application/octet-stream' } | { status: CODE } | { short: BYTES }.
 */
export async function startFaultServer({ distDir, ortDir, models }) {
  const log = [];
  const faults = new Map();
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const body = path === '/' ? BLANK_PAGE : fileFor(path, { distDir, ortDir, models });
    const type = path === '/' ? 'text/html' : MIME[extname(path)] ?? 'application/octet-stream';
    const record = (status, note = '') => log.push(`${request.method} ${path} ${status}${note}`);
    const fault = faults.get(path);
    if (fault && fault.times > 0 && body !== null) {
      fault.times--;
      return inject(fault.fault, body, type, response, record);
    }
    if (body === null) {
      record(404);
      return void response.writeHead(404, { ...ISOLATION, 'Content-Type': 'text/plain' }).end('not found');
    }
    record(200);
    response.writeHead(200, { ...ISOLATION, 'Content-Type': type, 'Cache-Control': 'no-store', 'Content-Length': body.length }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    log,
    models,
    fail(path, fault, times = 1) {
      faults.set(path, { fault, times });
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function fileFor(path, { distDir, ortDir, models }) {
  const [, area, ...rest] = path.split('/');
  if (area === 'lib' && rest.join('/') === 'fill-inputs.mjs') return readFileSync(new URL('fill-inputs.mjs', import.meta.url));
  if (path === '/model/tooling/prng.mjs') return readFileSync(new URL('../../model/tooling/prng.mjs', import.meta.url));
  if (area === 'ort-js' && rest.join('/') === 'ort.wasm.min.mjs') return readFileSync(join(ortDir, 'ort.wasm.min.mjs'));
  if (area === 'dist') return readDistFile(distDir, rest.join('/'));
  if (area === 'models' && rest.length === 2 && models[rest[0]] && ['model.json', 'model.onnx', 'vocab.txt'].includes(rest[1])) {
    return readFileSync(join(models[rest[0]], rest[1]));
  }
  return null;
}

/**
 * The bytes of `relPath` under `distDir`, or null when it is missing or outside. worker.js gets its
 * bare 'onnxruntime-web/wasm' import mapped to ../ort-js/ort.wasm.min.mjs (ORT's own ESM build, to be
 * served beside dist/), which is what a bundler or an import map does for an app.
 */
export function readDistFile(distDir, relPath) {
  const file = normalize(join(distDir, relPath));
  if (!file.startsWith(distDir) || !existsSync(file) || !statSync(file).isFile()) return null;
  const bytes = readFileSync(file);
  if (relPath !== 'worker.js') return bytes;
  return bytes.toString('utf8').replace(`from 'onnxruntime-web/wasm'`, `from '../ort-js/ort.wasm.min.mjs'`);
}

/**
 * Starts a static server on 127.0.0.1 (any free port). A request path /MODE/REST is answered by
 * `route(REST)`: a body (Buffer or string, typed by REST's extension), `{ body, type }`, or null
 * (404). MODE `iso` adds COOP/COEP/CORP (the page is cross-origin isolated), any other mode does not.
 * Resolves to { origin, close() }.
 */
export async function startRouteServer(route) {
  const server = createServer((request, response) => {
    const [, mode, ...rest] = new URL(request.url ?? '/', 'http://localhost').pathname.split('/');
    const path = rest.join('/');
    const answer = route(path);
    if (answer === null) return void response.writeHead(404).end();
    const { body, type } = typeof answer === 'string' || Buffer.isBuffer(answer) ? { body: answer, type: undefined } : answer;
    const isolation = mode === 'iso' ? ISOLATION : {};
    response.writeHead(200, { ...isolation, 'Content-Type': type ?? MIME[extname(path)] ?? 'application/octet-stream' }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Answers one request with `fault` instead of `body`. */
function inject(fault, body, type, response, record) {
  const headers = { ...ISOLATION, 'Content-Type': type, 'Cache-Control': 'no-store' };
  if (fault.status) {
    record(fault.status, ' (injected)');
    response.writeHead(fault.status, { ...headers, 'Content-Type': 'text/plain' }).end('injected failure');
  } else if (fault.html) {
    record(200, ` (injected HTML as ${fault.html})`);
    response.writeHead(200, { ...headers, 'Content-Type': fault.html }).end(HTML_PAGE);
  } else if (fault.drop !== undefined) {
    record(200, ` (connection dropped after ${fault.drop} of ${body.length} bytes)`);
    response.writeHead(200, { ...headers, 'Content-Length': body.length });
    response.write(body.subarray(0, fault.drop), () => setTimeout(() => response.socket?.destroy(), 50));
  } else {
    record(200, ` (short body: ${fault.short} of ${body.length} bytes, no Content-Length)`);
    response.writeHead(200, headers); // chunked: the short body ends cleanly
    response.end(body.subarray(0, fault.short));
  }
}

/**
 * Debian's Chromium, headless, with the flags that work as root on this closed network
 * (shared/docs/toolchain.md), in `userDataDir` (default: a fresh temporary profile, so no service
 * worker or cache survives from another run).
 */
export async function launchChromium({ userDataDir, viewport } = {}) {
  const { chromium } = await import('playwright-core');
  const profile = userDataDir ?? mkdtempSync(join(tmpdir(), 'tiankong-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    ...(viewport ? { viewport } : {}),
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--enable-blink-features=ForceEagerMeasureMemory'],
  });
  // A profile made here is removed with the browser; a caller's own directory is the caller's.
  // Chromium's helpers can still be writing into it right after 'close': retry, and leave it to
  // the OS's temp cleanup rather than fail a test run over a temp directory.
  if (userDataDir === undefined) {
    context.on('close', () => void rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch(() => {}));
  }
  return context;
}
