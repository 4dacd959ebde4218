// Security of the built app (web/app built with the tiny model, served by scripts/serve.mjs) and
// of the built runtime, in headless Chromium:
// - the served headers carry the CSP and isolation headers, and the CSP is really enforced:
//   an inline script, an inline event handler, eval and new Function are all blocked;
// - no eval / new Function anywhere in dist/ or in the app bundle (Emscripten and ORT glue included);
// - text that looks like HTML stays text in the results (no element, no request, no script);
// - no request ever leaves the origin;
// - the service worker intercepts only same-origin GETs and caches nothing at run time.
// (tests/e2e/app.test.ts checks the ordinary flows; this file attacks them.)
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAppServer } from '../../scripts/serve.mjs';
import { CHROMIUM, launchChromium } from '../harness/chromium.mjs';
import { distDir, missingPrerequisite, repoRoot, testModelDir } from '../runtime/fixtures.js';

const missing =
  missingPrerequisite() ?? (existsSync(CHROMIUM) ? null : `${CHROMIUM} not found: security tests skipped`);
if (missing) console.warn(missing);

const READY = /模型已就绪/;
/** Code that builds code from strings: what a CSP without 'unsafe-eval' forbids. */
const DYNAMIC_CODE =
  /\beval\s*\(|\bnew\s+Function\s*\(|(?<![\w$.])Function\s*\(\s*['"`]|set(?:Timeout|Interval)\s*\(\s*['"`]/;

function scriptFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(m?js)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

describe.skipIf(missing !== null)('security of the built app and runtime', () => {
  let work: string;
  let appDir: string;
  let app: Awaited<ReturnType<typeof startAppServer>>;
  let origin: string;
  let elsewhere: Server;
  let elsewhereOrigin: string;
  const elsewhereLog: string[] = [];
  let context: BrowserContext;
  let page: Page;
  const requests: string[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tiankong-security-'));
    appDir = join(work, 'app');
    process.env.TIANKONG_MODEL_DIR = testModelDir();
    try {
      await build({
        configFile: join(repoRoot, 'web/app/vite.config.ts'),
        logLevel: 'warn',
        build: { outDir: appDir, emptyOutDir: true },
      });
    } finally {
      delete process.env.TIANKONG_MODEL_DIR;
    }
    app = await startAppServer({ root: appDir });
    origin = app.origin;
    // Another origin that would answer a CORS fetch: the CSP must stop the page from reaching it.
    elsewhere = createServer((request, response) => {
      elsewhereLog.push(`${request.method} ${request.url}`);
      response
        .writeHead(200, { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' })
        .end('elsewhere');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    elsewhereOrigin = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    context = await launchChromium();
    context.on('request', (request) => requests.push(request.url()));
    await context.addInitScript(() => {
      const w = window as unknown as { __csp: string[] };
      w.__csp = [];
      document.addEventListener('securitypolicyviolation', (e) =>
        w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${origin}/`);
    await page.getByTestId('status').filter({ hasText: READY }).waitFor({ timeout: 120_000 });
  });
  afterAll(async () => {
    await context?.close();
    await app?.close();
    elsewhere?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('every response carries the CSP (no unsafe-inline / unsafe-eval for scripts) and the isolation headers', async () => {
    const assets = readdirSync(join(appDir, 'assets')).filter((f) => f.endsWith('.js'));
    for (const path of [
      '/',
      '/sw.js',
      `/assets/${assets[0]}`,
      '/tiankong/worker.js',
      '/tiankong/core/wasm/tiankong-core.wasm',
      '/missing',
    ]) {
      const response = await fetch(`${origin}${path}`);
      const csp = response.headers.get('content-security-policy') ?? '';
      const scriptSrc = /script-src ([^;]*)/.exec(csp)?.[1] ?? '';
      expect(scriptSrc, path).toBe("'self' 'wasm-unsafe-eval'");
      expect(csp, path).toMatch(/default-src 'self'/);
      expect(csp, path).toMatch(/object-src 'none'/);
      expect(csp, path).toMatch(/frame-ancestors 'none'/);
      expect(response.headers.get('cross-origin-opener-policy'), path).toBe('same-origin');
      expect(response.headers.get('cross-origin-embedder-policy'), path).toBe('require-corp');
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
  });

  test('no eval or new Function in dist/ or the app bundle (Emscripten and ONNX Runtime glue included)', () => {
    const files = [...scriptFiles(distDir), ...scriptFiles(appDir)];
    expect(files.some((f) => /tiankong-core\.mjs$/.test(f))).toBe(true);
    expect(files.some((f) => /ort-wasm-simd-threaded\.mjs$|onnxruntime-web__wasm\.mjs$/.test(f))).toBe(true);
    const offenders = files.flatMap((file) => {
      const match = DYNAMIC_CODE.exec(readFileSync(file, 'utf8'));
      return match
        ? [`${file}: …${readFileSync(file, 'utf8').slice(Math.max(0, match.index - 40), match.index + 40)}…`]
        : [];
    });
    expect(offenders).toEqual([]);
  });

  test('the CSP is enforced: inline script, inline handler and string eval are blocked', async () => {
    const outcome = await page.evaluate(async () => {
      const w = window as unknown as Record<string, unknown>;
      const script = document.createElement('script');
      script.textContent = 'window.__inline = true';
      document.body.append(script);
      const button = document.createElement('button');
      button.setAttribute('onclick', 'window.__handler = true');
      document.body.append(button);
      button.click();
      // Code the DevTools protocol evaluates (this function) is exempt from the CSP, so eval is
      // reached the way page code would: a string timer is compiled by the page itself.
      (setTimeout as unknown as (code: string, ms: number) => void)('window.__timer = true', 0);
      await new Promise((resolve) => setTimeout(resolve, 200)); // timers run, violation events are queued
      const result = {
        inline: w.__inline ?? 'blocked',
        handler: w.__handler ?? 'blocked',
        stringTimer: w.__timer ?? 'blocked',
      };
      script.remove();
      button.remove();
      return result;
    });
    expect(outcome).toEqual({ inline: 'blocked', handler: 'blocked', stringTimer: 'blocked' });
    const violations = await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
    expect(violations.some((v) => v.startsWith('script-src-elem inline'))).toBe(true);
    expect(violations.some((v) => v.startsWith('script-src-attr inline'))).toBe(true);
    expect(violations.some((v) => v.startsWith('script-src eval'))).toBe(true);
  });

  test('HTML in the input stays text in the results: no element, no request, no script', async () => {
    const payload = '<img src=/xss-probe onerror="window.__xss=1">[MASK]<script>window.__xss=2</script><b>粗</b>';
    await page.getByTestId('input').fill(payload);
    await page.getByTestId('predict').click();
    await expect.poll(() => page.getByTestId('mask-result').count(), { timeout: 60_000 }).toBe(1);
    const inResults = await page.evaluate(() => {
      const main = document.querySelector('main') ?? document.body;
      return {
        images: main.querySelectorAll('img[src*="xss-probe"]').length,
        bold: Array.from(main.querySelectorAll('b')).filter((b) => b.textContent === '粗').length,
        xss: (window as unknown as { __xss?: number }).__xss ?? null,
        text: main.textContent ?? '',
      };
    });
    expect(inResults).toMatchObject({ images: 0, bold: 0, xss: null });
    expect(inResults.text).toContain('<b>粗</b>');
    expect(requests.filter((url) => url.includes('xss-probe'))).toEqual([]);
  });

  test('no request left the origin (app load, model, runtime, prediction)', () => {
    expect(requests.length).toBeGreaterThan(5);
    expect(requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
  });

  test('the service worker intercepts only same-origin GETs and stores nothing at run time; the CSP stops cross-origin fetches', async () => {
    // The worker takes control once it activates (clients.claim), which a loaded machine delays.
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });
    const snapshot = () =>
      page.evaluate(async () => {
        const all: string[] = [];
        for (const name of (await caches.keys()).sort()) {
          for (const request of await (await caches.open(name)).keys())
            all.push(`${name} ${request.method} ${request.url}`);
        }
        return all.sort();
      });
    const before = await snapshot();
    expect(before.length).toBeGreaterThan(0);
    const viaWorker = new Map<string, boolean>();
    page.on('response', (response) =>
      viaWorker.set(`${response.request().method()} ${response.url()}`, response.fromServiceWorker()),
    );
    const probes = await page.evaluate(async (other) => {
      const status = (p: Promise<Response>) =>
        p.then(
          (r) => r.status,
          (e) => String(e),
        );
      return {
        precached: await status(fetch('./index.html')),
        notPrecached: await status(fetch('./not-precached.txt')),
        post: await status(fetch('./', { method: 'POST', body: 'x' })),
        crossOrigin: await status(fetch(`${other}/probe`, { mode: 'cors' })),
      };
    }, elsewhereOrigin);
    // connect-src falls back to default-src 'self': the cross-origin fetch never leaves the page.
    expect(probes).toEqual({ precached: 200, notPrecached: 404, post: 405, crossOrigin: 'TypeError: Failed to fetch' });
    expect(viaWorker.get(`GET ${origin}/index.html`)).toBe(true);
    expect(viaWorker.get(`GET ${origin}/not-precached.txt`)).toBe(true); // passed through, not stored
    expect(viaWorker.get(`POST ${origin}/`)).toBe(false);
    expect(elsewhereLog).toEqual([]);
    expect(
      (await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp)).some((v) =>
        v.startsWith(`connect-src ${elsewhereOrigin}`),
      ),
    ).toBe(true);
    expect(await snapshot()).toEqual(before);
  });
});
