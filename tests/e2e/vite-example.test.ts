// The npm package as a web developer uses it: `npm pack`, install the tarball into the Vite example
// (web/examples/vite: `createFillMask()` with no argument, nothing configured but COOP/COEP headers),
// type-check it under `moduleResolution: bundler`, build it and run the dev server, and fill a
// blank in headless Chromium each time. Also what the tarball holds: LICENSE and metadata, browser
// types first for bundlers, source maps that resolve, no second copy of ONNX Runtime's wasm, and
// `require('tiankong')` on the Node version `engines` names.
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startStaticServer } from '../harness/static-server.mjs';
import { REPO, launchBrowser, missingPrerequisite } from './harness.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const execFileAsync = promisify(execFile);
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

/** Runs a command to its end without blocking this process. */
function run(
  command: string,
  args: string[],
  cwd: string,
  timeout = 300_000,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe.skipIf(missing !== null)('npm package in the Vite example', () => {
  let work: string;
  let example: string;
  let files: string[];
  let context: BrowserContext;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'tiankong-vite-example-'));
    // The current build (dist/); tests/e2e/pack-clone.test.ts packs a fresh clone with its prepack.
    const packed = JSON.parse(
      (
        await execFileAsync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
          cwd: REPO,
          encoding: 'utf8',
          maxBuffer: 64 << 20,
        })
      ).stdout,
    );
    files = packed[0].files.map((f: { path: string }) => f.path);
    example = path.join(work, 'example');
    cpSync(path.join(REPO, 'web/examples/vite'), example, {
      recursive: true,
      filter: (src) => !/node_modules|[\\/]dist$/.test(src),
    });
    const install = (mode: string) =>
      run('npm', ['install', mode, '--no-audit', '--no-fund', path.join(work, packed[0].filename)], example);
    const offline = await install('--offline');
    if (offline.status !== 0) {
      const online = await install('--prefer-offline');
      expect(online.status, online.stderr).toBe(0);
    }
    context = await launchBrowser();
  });

  afterAll(async () => {
    await context?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** Opens `url`, waits for the example's candidates; returns the first token, the thread count and what went wrong. */
  async function fillIn(url: string): Promise<{ top: string | null; threads: number; errors: string[] }> {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && !/favicon/.test(m.location().url)) errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.addInitScript(() =>
      document.addEventListener('securitypolicyviolation', (e) =>
        console.error(`CSP ${e.violatedDirective} ${e.blockedURI}`),
      ),
    );
    page.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) errors.push(`${r.status()} ${r.url()}`);
    });
    try {
      await page.goto(url);
      await page.locator('#candidates li').first().waitFor({ timeout: 120_000 });
      const status = (await page.locator('#status').textContent()) ?? '';
      return {
        top: await page.locator('#candidates li').first().getAttribute('data-token'),
        threads: Number(/^(\d+) thread/.exec(status)?.[1]),
        errors,
      };
    } finally {
      await page.close();
    }
  }

  test("the tarball: LICENSE and metadata, browser types for bundlers, Node >= 20.19, source maps that resolve, no copy of ORT's wasm", () => {
    const manifest = JSON.parse(readFileSync(path.join(example, 'node_modules/tiankong/package.json'), 'utf8'));
    expect(files).toContain('LICENSE');
    expect(readFileSync(path.join(example, 'node_modules/tiankong/LICENSE'), 'utf8')).toMatch(
      /^MIT License[\s\S]*Data and model files/,
    );
    expect(manifest.license).toBe('MIT');
    for (const field of ['repository', 'homepage', 'keywords', 'sideEffects'])
      expect(manifest[field], field).toBeTruthy();
    expect(manifest.engines.node).toBe('>=20.19');
    expect(manifest.scripts.prepack).toMatch(/build-wasm.*build-js/);
    // Bundlers (browser condition) and TypeScript's bundler resolution (no node condition) get the browser entry.
    const root = manifest.exports['.'];
    expect(Object.keys(root)).toEqual(['node', 'browser', 'types', 'default']);
    expect(root.browser).toEqual({ types: './dist/browser.d.ts', default: './dist/browser.js' });
    expect(root.types).toBe('./dist/browser.d.ts');
    expect(root.node).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    // ORT's wasm comes from onnxruntime-web; the default model ships.
    expect(files.filter((f) => /ort-wasm/.test(f))).toEqual([]);
    expect(files).toEqual(
      expect.arrayContaining([
        'model/default/model.json',
        'model/default/model.onnx',
        'model/default/vocab.txt',
        'model/default/memory.bin',
        'dist/core/wasm/tiankong-core.wasm',
        'dist/core/wasm/tiankong-core.mjs',
      ]),
    );
    // Every referenced source map ships, and every source it names.
    const installed = path.join(example, 'node_modules/tiankong');
    const maps = files
      .filter((f) => f.endsWith('.js'))
      .flatMap((f) => {
        const ref = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(path.join(installed, f), 'utf8'))?.[1];
        return ref ? [path.join(path.dirname(f), ref)] : [];
      });
    expect(maps.length).toBeGreaterThan(20);
    for (const map of maps) {
      expect(files, map).toContain(map);
      for (const source of JSON.parse(readFileSync(path.join(installed, map), 'utf8')).sources as string[]) {
        expect(existsSync(path.join(installed, path.dirname(map), source)), `${map} -> ${source}`).toBe(true);
      }
    }
  });

  test('require("tiankong") and import work in Node (the Node entry, default model)', async () => {
    writeFileSync(
      path.join(example, 'use.cjs'),
      `
      const { createFillMask, createTokenizer } = require('tiankong');
      createFillMask({ backend: 'wasm', threads: 1 }).then(async (tk) => {
        const result = await tk.fill('春眠不觉晓，处处闻啼[MASK]。');
        console.log(JSON.stringify({ top: result.masks[0].candidates[0].token, tokenizer: typeof createTokenizer }));
        await tk.dispose();
      });
    `,
    );
    const used = await run(process.execPath, ['use.cjs'], example, 120_000);
    expect(used.status, used.stderr).toBe(0);
    expect(JSON.parse(used.stdout)).toEqual({ top: '鸟', tokenizer: 'function' });
  });

  test('types under moduleResolution "bundler": the browser API (assets), not the Node-only one (createTokenizer)', async () => {
    const tsc = path.join(REPO, 'node_modules/.bin/tsc');
    const ok = await run(tsc, ['-p', 'tsconfig.json'], example);
    expect(ok.status, ok.stdout).toBe(0);
    writeFileSync(
      path.join(example, 'src/types-probe.ts'),
      [
        "import { createFillMask } from 'tiankong';",
        "export const withAssets = () => createFillMask({ assets: { core: '/core/', ort: '/ort/' } });",
        "export { createTokenizer } from 'tiankong';", // Node-only: must not type-check for a browser bundle
      ].join('\n'),
    );
    const probe = await run(tsc, ['-p', 'tsconfig.json'], example);
    rmSync(path.join(example, 'src/types-probe.ts'));
    expect(probe.status).not.toBe(0);
    expect(probe.stdout).toMatch(/types-probe\.ts\(3,.*createTokenizer/);
    expect(probe.stdout).not.toMatch(/types-probe\.ts\(2,/);
  });

  test('vite build: the bundle fills a blank, with threads when cross-origin isolated and without', async () => {
    const built = await run(process.execPath, [path.join(example, 'node_modules/vite/bin/vite.js'), 'build'], example);
    expect(built.status, built.stderr).toBe(0);
    expect(built.stdout + built.stderr).not.toMatch(
      /doesn't exist at build time|externalized for browser compatibility/,
    );
    // The README's Content-Security-Policy for pages that use tiankong: nothing more is needed.
    const csp = {
      ...ISOLATION,
      'Content-Security-Policy':
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; connect-src 'self'",
    };
    for (const [headers, threads] of [
      [ISOLATION, 2],
      [{}, 1],
      [csp, 2],
    ] as const) {
      const server = await startStaticServer({ mounts: { '/': path.join(example, 'dist') }, headers });
      try {
        const result = await fillIn(`${server.origin}/`);
        expect(result).toEqual({ top: '鸟', threads: expect.any(Number), errors: [] });
        if (threads === 1) expect(result.threads).toBe(1);
        else expect(result.threads).toBeGreaterThanOrEqual(2);
      } finally {
        await server.close();
      }
    }
  });

  test('vite dev server (no optimizeDeps setting): fills a blank', async () => {
    expect(readFileSync(path.join(example, 'vite.config.ts'), 'utf8')).not.toMatch(/optimizeDeps/);
    const { createServer } = (await import(
      pathToFileURL(path.join(example, 'node_modules/vite/dist/node/index.js')).href
    )) as typeof import('vite');
    const server = await createServer({
      root: example,
      configFile: path.join(example, 'vite.config.ts'),
      logLevel: 'error',
      server: { port: 0, host: '127.0.0.1' },
    });
    await server.listen();
    try {
      const result = await fillIn(server.resolvedUrls!.local[0]!);
      expect(result.errors).toEqual([]);
      expect(result.top).toBe('鸟');
    } finally {
      await server.close();
    }
  });
});
