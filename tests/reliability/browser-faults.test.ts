// Network and model faults in headless Chromium, through the built browser entry
// (dist/browser.js → Worker → Cache Storage) and a local server that injects faults
// (tests/harness/package-origin.mjs): first visit offline, the connection dropped mid-download,
// an HTML page instead of the model (labelled text/html or disguised as octet-stream), an HTTP
// error, a short body, a corrupted Cache Storage entry, a corrupted model, an unloadable model,
// NaN logits. Each gives a specific TiankongError, leaves no unverified bytes in Cache Storage,
// and the next attempt works. (tests/runtime/browser.test.ts covers 404, tampered and the
// plain HTML fallback on a first load; this file covers what happens around them.)
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHROMIUM, launchChromium } from '../harness/chromium.mjs';
import { startPackageOrigin } from '../harness/package-origin.mjs';
import { api, distDir, missingPrerequisite, repoRoot, testModelDir } from '../runtime/fixtures.js';
import { makeFaultyGraphs, modelVariant } from './helpers.js';

const missing = missingPrerequisite() ?? (existsSync(CHROMIUM) ? null : `${CHROMIUM} not found: browser tests skipped`);
if (missing) console.warn(missing);

const TEXT = '春眠不觉晓，处处闻[MASK]鸟。';

type Outcome = { ok: true; tokens: string[] } | { ok: false; isTiankongError: boolean; code: string; message: string };

/** In-page helpers: load a model and fill TEXT (or fail), list Cache Storage keys, read an entry's sha256. */
const PAGE_HELPERS = `
  window.__api = await import('/dist/browser.js');
  window.__load = async (base) => {
    const { createFillMask, TiankongError } = window.__api;
    let tk;
    try {
      tk = await createFillMask({ model: base });
      const result = await tk.fill(${JSON.stringify(TEXT)}, { topK: 3 });
      return { ok: true, tokens: result.masks[0].candidates.map((c) => c.token) };
    } catch (error) {
      return { ok: false, isTiankongError: error instanceof TiankongError, code: error.code, message: error.message };
    } finally {
      await tk?.dispose();
    }
  };
  const bucket = () => caches.open('tiankong-models-v1');
  window.__keys = async () => (await (await bucket()).keys()).map((r) => new URL(r.url).pathname + new URL(r.url).search).sort();
  window.__sha256 = async (key) => {
    const hit = await (await bucket()).match(key);
    if (!hit) return null;
    const digest = await crypto.subtle.digest('SHA-256', await hit.arrayBuffer());
    return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
  };
  window.__poison = async (key) => (await bucket()).put(key, new Response('garbage'));
`;

describe.skipIf(missing !== null)('network and model faults in headless Chromium', () => {
  let work: string;
  let server: Awaited<ReturnType<typeof startPackageOrigin>>;
  let context: BrowserContext;
  let page: Page;
  let expectedTokens: string[];
  let manifest: { files: Record<string, { sha256: string; bytes: number }> };

  beforeAll(async () => {
    const modelDir = testModelDir();
    manifest = JSON.parse(readFileSync(join(modelDir, 'model.json'), 'utf8'));
    work = mkdtempSync(join(tmpdir(), 'tiankong-browser-faults-'));
    makeFaultyGraphs(join(work, 'graphs'), 1626);
    const withGraph = (name: string) =>
      modelVariant(modelDir, join(work, name), (d) =>
        copyFileSync(join(work, 'graphs', `${name}.onnx`), join(d, 'model.onnx')),
      );
    const corrupt = modelVariant(
      modelDir,
      join(work, 'corrupt'),
      (d) => {
        const bytes = readFileSync(join(d, 'model.onnx'));
        bytes[1000]! ^= 1;
        writeFileSync(join(d, 'model.onnx'), bytes);
      },
      true,
    );
    // Every scenario gets its own URL (so its own Cache Storage keys) for the same healthy model.
    const healthy = Object.fromEntries(
      ['offline', 'drop', 'html', 'disguised', 'status', 'short', 'poisoned'].map((n) => [n, modelDir]),
    );
    server = await startPackageOrigin({
      distDir,
      ortDir: join(repoRoot, 'node_modules', 'onnxruntime-web', 'dist'),
      models: {
        ...healthy,
        corrupt,
        'unsupported-op': withGraph('unsupported-op'),
        'nan-logits': withGraph('nan-logits'),
      },
    });
    const node = await (await api()).createFillMask({ model: modelDir, backend: 'wasm' });
    expectedTokens = (await node.fill(TEXT, { topK: 3 })).masks[0]!.candidates.map((c) => c.token);
    await node.dispose();
    context = await launchChromium();
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${server.origin}/`);
    await page.evaluate(`(async () => { ${PAGE_HELPERS} })()`);
  });
  afterAll(async () => {
    await context?.close();
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const load = (name: string) =>
    page.evaluate((base) => (window as any).__load(base), `/models/${name}/`) as Promise<Outcome>;
  const keys = () => page.evaluate(() => (window as any).__keys()) as Promise<string[]>;
  const key = (name: string, file: 'model.onnx' | 'vocab.txt') =>
    `/models/${name}/${file}?tiankong-sha256=${manifest.files[file]!.sha256}`;
  const gets = (path: string) => server.log.filter((l) => l.startsWith(`GET ${path} `)).length;

  function expectError(outcome: Outcome, code: string, message: RegExp) {
    expect(outcome.ok, JSON.stringify(outcome)).toBe(false);
    if (outcome.ok) return;
    expect(outcome.isTiankongError).toBe(true);
    expect(outcome.code, outcome.message).toBe(code);
    expect(outcome.message).toMatch(message);
  }
  function expectWorks(outcome: Outcome) {
    expect(outcome, JSON.stringify(outcome)).toEqual({ ok: true, tokens: expectedTokens });
  }

  test('first visit offline: NETWORK, nothing cached; back online the same page loads', async () => {
    await context.setOffline(true);
    try {
      expectError(
        await load('offline'),
        'NETWORK',
        /offline, so the runtime's Worker \(worker\.js\) could not be downloaded; connect and try again/,
      );
    } finally {
      await context.setOffline(false);
    }
    expect(await keys()).toEqual([]);
    expectWorks(await load('offline'));
    expect(await keys()).toEqual([key('offline', 'model.onnx'), key('offline', 'vocab.txt')]);
  });

  test('connection dropped mid-download: NETWORK with the byte count, no partial entry, retry downloads again', async () => {
    server.fail('/models/drop/model.onnx', { drop: 100_000 });
    expectError(await load('drop'), 'NETWORK', /download of .*\/models\/drop\/model\.onnx failed after \d+ bytes/);
    expect(await keys()).not.toContain(key('drop', 'model.onnx'));
    expectWorks(await load('drop'));
    expect(gets('/models/drop/model.onnx')).toBe(2);
    expect(await page.evaluate((k) => (window as any).__sha256(k), key('drop', 'model.onnx'))).toBe(
      manifest.files['model.onnx']!.sha256,
    );
    expectWorks(await load('drop')); // third load: from Cache Storage
    expect(gets('/models/drop/model.onnx')).toBe(2);
  });

  test('an HTML page instead of the model, labelled text/html or disguised as octet-stream: BAD_MODEL, not cached', async () => {
    for (const [name, type] of [
      ['html', 'text/html'],
      ['disguised', 'application/octet-stream'],
    ] as const) {
      server.fail(`/models/${name}/model.onnx`, { html: type });
      expectError(
        await load(name),
        'BAD_MODEL',
        new RegExp(`/models/${name}/model\\.onnx returned an HTML page instead of the model file`),
      );
      expect(await keys()).not.toContain(key(name, 'model.onnx'));
      expectWorks(await load(name));
    }
  });

  test('HTTP 503 and a short body: NETWORK and INTEGRITY, not cached, retry works', async () => {
    server.fail('/models/status/model.onnx', { status: 503 });
    expectError(await load('status'), 'NETWORK', /HTTP 503 .*\/models\/status\/model\.onnx/);
    server.fail('/models/short/model.onnx', { short: 5000 });
    expectError(
      await load('short'),
      'INTEGRITY',
      new RegExp(
        `model\\.onnx has 5000 bytes but model\\.json says ${manifest.files['model.onnx']!.bytes}; the file is truncated`,
      ),
    );
    for (const name of ['status', 'short']) {
      expect(await keys()).not.toContain(key(name, 'model.onnx'));
      expectWorks(await load(name));
    }
  });

  test('a corrupted Cache Storage entry is detected, replaced by a fresh download, and works', async () => {
    expectWorks(await load('poisoned'));
    await page.evaluate((k) => (window as any).__poison(k), key('poisoned', 'model.onnx'));
    expectWorks(await load('poisoned'));
    expect(gets('/models/poisoned/model.onnx')).toBe(2);
    expect(await page.evaluate((k) => (window as any).__sha256(k), key('poisoned', 'model.onnx'))).toBe(
      manifest.files['model.onnx']!.sha256,
    );
  });

  test('model faults: corrupted file (INTEGRITY, not cached), unknown op and NaN logits (BAD_MODEL); the Worker path still works', async () => {
    const before = await keys();
    expectError(
      await load('corrupt'),
      'INTEGRITY',
      /\/models\/corrupt\/model\.onnx has sha256 [0-9a-f]{64} but model\.json says/,
    );
    expect((await keys()).filter((k) => k.startsWith('/models/corrupt/model.onnx'))).toEqual([]);
    expectError(await load('unsupported-op'), 'BAD_MODEL', /cannot be loaded by ONNX Runtime \(wasm\).*FancyGelu/);
    expectError(await load('nan-logits'), 'BAD_MODEL', /unusable logits .*NaN/);
    // What the faulty-but-intact models leave in Cache Storage: only bytes that match their
    // manifest's sha256 (content-addressed), never the corrupted file.
    for (const k of (await keys()).filter((k) => !before.includes(k))) {
      expect(k).toMatch(/^\/models\/(corrupt|unsupported-op|nan-logits)\//);
      const sha = new URL(k, 'http://x').searchParams.get('tiankong-sha256');
      expect(await page.evaluate((k) => (window as any).__sha256(k), k)).toBe(sha);
    }
    expectWorks(await load('offline'));
  });
});
