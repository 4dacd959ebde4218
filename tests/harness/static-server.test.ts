// The shared static server's own features, over real HTTP (the app's configuration is tested in
// tests/app/serve.test.ts, the faults end to end in Chromium in tests/reliability/browser-faults):
// mount resolution, per-path headers, no-store, fault injection and the request log.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startStaticServer, type RequestRecord, type StaticServer } from './static-server.mjs';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  error?: string;
}

/** A raw GET that also reports a connection dropped mid-body. */
function get(port: number, rawPath: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: rawPath }, (res) => {
      const chunks: Buffer[] = [];
      const done = (error?: string) =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), error });
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done());
      res.on('aborted', () => done('aborted'));
      res.on('error', () => done('aborted'));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('shared static server', () => {
  let dir: string;
  let server: StaticServer;
  const records: RequestRecord[] = [];
  const model = Buffer.alloc(10_000, 7);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tiankong-static-'));
    mkdirSync(path.join(dir, 'pkg', 'sub'), { recursive: true });
    writeFileSync(path.join(dir, 'pkg', 'core.wasm'), Buffer.from([0, 97, 115, 109]));
    writeFileSync(path.join(dir, 'pkg', 'sub', 'index.html'), '<title>sub</title>');
    writeFileSync(path.join(dir, 'one.mjs'), 'export {};');
    writeFileSync(path.join(dir, 'secret.txt'), 'SECRET');
    server = await startStaticServer({
      mounts: {
        '/pkg/': path.join(dir, 'pkg'),
        '/pkg/special/': (rest) => (rest === 'x.json' ? '{}' : null),
        '/exact/one.mjs': path.join(dir, 'one.mjs'),
        '/models/': (rest) =>
          rest === 'm/model.onnx' ? model : rest === 'page' ? { body: '<p>', type: 'text/html' } : null,
      },
      headers: (p): Record<string, string> =>
        p.startsWith('/pkg/') ? { 'Cross-Origin-Embedder-Policy': 'require-corp' } : {},
      log: true,
      onRequest: (record) => records.push(record),
    });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('folders, exact files and functions; the longest key wins; typed by extension; no-store', async () => {
    const wasm = await get(server.port, '/pkg/core.wasm');
    expect(wasm.status).toBe(200);
    expect(wasm.headers['content-type']).toBe('application/wasm');
    expect(wasm.headers['cache-control']).toBe('no-store');
    expect(wasm.headers['cross-origin-embedder-policy']).toBe('require-corp');
    expect((await get(server.port, '/pkg/sub/')).body.toString()).toBe('<title>sub</title>');
    const json = await get(server.port, '/pkg/special/x.json');
    expect([json.status, json.headers['content-type'], json.body.toString()]).toEqual([
      200,
      'application/json; charset=utf-8',
      '{}',
    ]);
    expect((await get(server.port, '/pkg/special/core.wasm')).status).toBe(404); // the function mount answers, not the folder
    const one = await get(server.port, '/exact/one.mjs?v=1');
    expect([one.status, one.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
    expect((await get(server.port, '/exact/one.mjs/')).status).toBe(404);
    expect((await get(server.port, '/models/page')).headers['content-type']).toBe('text/html');
    const missing = await get(server.port, '/nowhere');
    expect([missing.status, missing.headers['cross-origin-embedder-policy']]).toEqual([404, undefined]);
    for (const attempt of ['/pkg/..%2fsecret.txt', '/pkg/%2e%2e/secret.txt', '/models/%00']) {
      const res = await get(server.port, attempt);
      expect(res.status, attempt).toBeGreaterThanOrEqual(400);
      expect(res.body.toString(), attempt).not.toContain('SECRET');
    }
  });

  test('faults: status, HTML, short body, dropped connection; each once, then the file again; all logged', async () => {
    server.log.length = 0;
    const url = '/models/m/model.onnx';
    server.fail(url, { status: 503 });
    expect((await get(server.port, url)).status).toBe(503);
    server.fail(url, { html: 'application/octet-stream' });
    const html = await get(server.port, url);
    expect([html.status, html.headers['content-type'], html.body.toString().startsWith('<!doctype html>')]).toEqual([
      200,
      'application/octet-stream',
      true,
    ]);
    server.fail(url, { short: 5000 });
    const short = await get(server.port, url);
    expect([short.status, short.body.length, short.error]).toEqual([200, 5000, undefined]);
    server.fail(url, { drop: 1000 });
    const dropped = await get(server.port, url);
    expect(dropped.error).toBe('aborted');
    expect(dropped.body.length).toBeLessThan(model.length);
    const whole = await get(server.port, url);
    expect(whole.body.equals(model)).toBe(true);
    expect(server.log).toEqual([
      `GET ${url} 503 (injected)`,
      `GET ${url} 200 (injected HTML as application/octet-stream)`,
      `GET ${url} 200 (short body: 5000 of 10000 bytes, no Content-Length)`,
      `GET ${url} 200 (connection dropped after 1000 of 10000 bytes)`,
      `GET ${url} 200`,
    ]);
    expect(records.at(-1)).toEqual({ method: 'GET', url, path: url, status: 200, bytes: 10_000, note: '' });
  });
});
