// scripts/serve.mjs (the app's configuration of tests/harness/static-server.mjs) over real HTTP:
// headers on every response, MIME types, revalidation, no way out of the served folder, and the
// port fallback.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAppServer } from '../../scripts/serve.mjs';
import { resolveRequestPath } from '../harness/static-server.mjs';

/** A raw GET (fetch would normalise "..", which is exactly what must be tested). */
function get(port: number, rawPath: string, headers: Record<string, string> = {}, method = 'GET') {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
    (resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: rawPath, method, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    },
  );
}

/** A raw GET returning the body's bytes as sent (no decoding). */
function getBytes(port: number, rawPath: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: rawPath, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
}

const BIG_JS = `export const text = ${JSON.stringify('填空'.repeat(2000))};\n`;

describe('static server', () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startAppServer>>;
  let port: number;
  const served: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tiankong-serve-'));
    const root = path.join(dir, 'root');
    mkdirSync(path.join(root, 'assets'), { recursive: true });
    mkdirSync(path.join(root, 'models'), { recursive: true });
    writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>app</title>');
    writeFileSync(path.join(root, 'core.wasm'), Buffer.from([0, 97, 115, 109]));
    writeFileSync(path.join(root, 'loader.mjs'), 'export {};');
    writeFileSync(path.join(root, 'models', 'model.onnx'), 'onnx');
    writeFileSync(path.join(root, 'assets', 'index-abc.js'), 'console.log(1)');
    const { brotliCompressSync, gzipSync } = await import('node:zlib');
    writeFileSync(path.join(root, 'big.js'), BIG_JS);
    writeFileSync(path.join(root, 'big.js.br'), brotliCompressSync(BIG_JS));
    writeFileSync(path.join(root, 'big.js.gz'), gzipSync(BIG_JS));
    writeFileSync(path.join(dir, 'secret.txt'), 'SECRET');
    server = await startAppServer({
      root,
      onRequest: ({ method, url, status }) => served.push(`${method} ${url} ${status}`),
    });
    port = server.port;
  });

  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('index, isolation and security headers', async () => {
    const res = await get(port, '/');
    expect(res.status).toBe(200);
    expect(res.body).toContain('<title>app</title>');
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
    expect(res.headers['cross-origin-embedder-policy']).toBe('require-corp');
    expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; object-src 'none'; base-uri 'self'; " +
        "form-action 'self'; frame-ancestors 'none'",
    );
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  test('MIME types for wasm, ES modules and models; hashed assets are immutable', async () => {
    expect((await get(port, '/core.wasm')).headers['content-type']).toBe('application/wasm');
    expect((await get(port, '/loader.mjs')).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await get(port, '/models/model.onnx')).headers['content-type']).toBe('application/octet-stream');
    expect((await get(port, '/assets/index-abc.js')).headers['cache-control']).toContain('immutable');
  });

  test('ETag revalidation answers 304; HEAD has no body', async () => {
    const first = await get(port, '/core.wasm');
    const again = await get(port, '/core.wasm', { 'If-None-Match': String(first.headers.etag) });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    const head = await get(port, '/index.html', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-length']).toBe(String('<!doctype html><title>app</title>'.length));
  });

  test('no directory traversal, in any spelling; errors still carry the headers', async () => {
    for (const attempt of [
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/..%2fsecret.txt',
      '/models/..%2f..%2fsecret.txt',
      '/%2e%2e%5csecret.txt',
      '/models/%00',
      '//../secret.txt',
      '/%E0%A4%A',
    ]) {
      const res = await get(port, attempt);
      expect(res.status, attempt).toBeGreaterThanOrEqual(400);
      expect(res.body, attempt).not.toContain('SECRET');
      expect(res.headers['cross-origin-embedder-policy']).toBe('require-corp');
    }
    expect(resolveRequestPath('/srv/app', '/a/../../b')).toBe('/srv/app/b'); // dot segments clamp at the root
    expect(resolveRequestPath('/srv/app', '/a/..%2f..%2fb')).toBeNull(); // encoded separators are refused
    expect(resolveRequestPath('/srv/app', '/a/b.txt')).toBe('/srv/app/a/b.txt');
  });

  test('404 for missing files, 405 for other methods; each answer is reported', async () => {
    served.length = 0;
    expect((await get(port, '/missing.js')).status).toBe(404);
    expect((await get(port, '/index.html', {}, 'POST')).status).toBe(405);
    expect(served).toEqual(['GET /missing.js 404', 'POST /index.html 405']);
  });

  test('precompressed files: .br, else .gz, to clients that accept them; the plain file otherwise', async () => {
    const { brotliDecompressSync, gunzipSync } = await import('node:zlib');
    const br = await getBytes(port, '/big.js', { 'Accept-Encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(br.headers.vary).toBe('Accept-Encoding');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(brotliDecompressSync(br.body).toString()).toBe(BIG_JS);
    const gz = await getBytes(port, '/big.js', { 'Accept-Encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(BIG_JS);
    expect(gz.headers.etag).not.toBe(br.headers.etag);
    const refused = await getBytes(port, '/big.js', { 'Accept-Encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.body.toString()).toBe(BIG_JS);
    const plain = await getBytes(port, '/big.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(BIG_JS);
    // Revalidation of the encoded variant.
    const again = await get(port, '/big.js', { 'Accept-Encoding': 'br', 'If-None-Match': String(br.headers.etag) });
    expect(again.status).toBe(304);
  });

  test('a busy port moves to the next free one', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const busy = (blocker.address() as AddressInfo).port;
    try {
      const other = await startAppServer({ root: dir, port: busy });
      expect(other.port).toBeGreaterThan(busy);
      await other.close();
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
