// The browser entry in headless Chromium (playwright-core): the built dist/browser.js starts
// dist/worker.js, which loads the core from dist/ and onnxruntime-web's wasm from beside ORT. The
// page runs what an app does: load with progress, fill, supersede a request, hit every
// main-thread error path, dispose, load again (from Cache Storage), and a tampered model.
// The server plays the bundler's one role here: it maps the bare specifier 'onnxruntime-web/wasm'
// in worker.js to ORT's own ESM build (ort.wasm.min.mjs), as Vite or an import map would.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHROMIUM, launchChromium } from '../harness/chromium.mjs';
import { readDistFile } from '../harness/package-origin.mjs';
import { startRouteServer } from '../harness/route-server.js';
import type { FillMaskModel } from '../../web/src/index.js';
import { api, distDir, missingPrerequisite, repoRoot, testMemoryModelDir, testModelDir } from './fixtures.js';

const missing = missingPrerequisite() ?? (existsSync(CHROMIUM) ? null : `${CHROMIUM} not found: browser tests skipped`);
if (missing) console.warn(missing);

const TEXT = '春眠不觉晓，处处闻[MASK]鸟。';

const PAGE = `<!doctype html><meta charset="utf-8"><script type="module">
  const out = {};
  try {
    const { createFillMask, TiankongError } = await import('./dist/browser.js');
    const code = (promise) => promise.then(() => 'resolved', (e) => (e instanceof TiankongError ? e.code : 'not a TiankongError: ' + e));
    out.firstLoad = [];
    const tk = await createFillMask({ model: './model/', onProgress: (p) => out.firstLoad.push(p) });
    out.fill = await tk.fill(${JSON.stringify(TEXT)}, { topK: 3 });
    const controller = new AbortController();
    const kept = tk.fill('秋[MASK]', { topK: 4 });
    const superseded = code(tk.fill('冬[MASK]', { topK: 4, signal: controller.signal }));
    controller.abort();
    out.superseded = await superseded;
    out.kept = (await kept).masks[0].candidates.length;
    out.batch = (await tk.fillBatch(['[MASK]天', '秋[MASK]'], { topK: 1 })).map((r) => r.text);
    out.explain = await tk.explain(${JSON.stringify(TEXT)}, 0, out.fill.masks[0].candidates[0].token);
    out.words = (await tk.fill('[MASK][MASK]天', { joint: true, beam: 2, topK: 2 })).words;
    out.codes = {
      noMask: await code(tk.fill('春天')), empty: await code(tk.fill('')), badOption: await code(tk.fill('[MASK]', { topK: 0 })),
      batchIndex: await tk.fillBatch(['[MASK]', 'x']).catch((e) => e.index),
    };
    out.stats = tk.stats();
    await tk.dispose();
    out.codes.disposed = await code(tk.fill('[MASK]'));
    out.secondLoad = [];
    const again = await createFillMask({ model: './model/', onProgress: (p) => out.secondLoad.push(p) });
    out.again = (await again.fill(${JSON.stringify(TEXT)}, { topK: 3 })).masks;
    await again.dispose();
    out.codes.integrity = await code(createFillMask({ model: './tampered/' }));
    out.codes.html = await code(createFillMask({ model: './spa/' }));
    out.codes.network = await code(createFillMask({ model: './missing/' }));
    out.cacheKeys = (await (await caches.open('tiankong-models-v1')).keys()).map((r) => new URL(r.url).pathname + new URL(r.url).search);
    // No model given: the package's own default model (model/default/ beside dist/).
    const packaged = await createFillMask();
    out.defaultModel = { name: packaged.stats().model.name, top: (await packaged.fill('春眠不觉晓，处处闻啼[MASK]。')).masks[0].candidates[0].token };
    await packaged.dispose();
  } catch (error) {
    out.error = String(error && error.stack || error);
  }
  window.__result = out;
</script>`;

/** The memory path through the Worker: memory.bin downloaded with progress, cached, verified; sources. */
const MEMORY_PAGE = `<!doctype html><meta charset="utf-8"><script type="module">
  const out = {};
  try {
    const { createFillMask, TiankongError } = await import('./dist/browser.js');
    const code = (promise) => promise.then(() => 'resolved', (e) => (e instanceof TiankongError ? e.code : 'not a TiankongError: ' + e));
    out.firstLoad = [];
    const tk = await createFillMask({ model: './memmodel/', onProgress: (p) => out.firstLoad.push(p) });
    out.fill = await tk.fill('床前明月光，疑是地[MASK]霜。', { topK: 3 });
    out.alone = await tk.fill('床前明月光，疑是地[MASK]霜。', { topK: 3, memory: false });
    out.memory = tk.stats().memory;
    await tk.dispose();
    out.secondLoad = [];
    const again = await createFillMask({ model: './memmodel/', onProgress: (p) => out.secondLoad.push(p) });
    await again.dispose();
    out.badMemory = await code(createFillMask({ model: './badmem/' }));
    out.skipped = [];
    const without = await createFillMask({ model: './badmem/', memory: false, onProgress: (p) => out.skipped.push(p.file) });
    out.withoutStats = without.stats().memory;
    await without.dispose();
    out.cacheKeys = (await (await caches.open('tiankong-models-v1')).keys()).map((r) => new URL(r.url).pathname);
  } catch (error) {
    out.error = String(error && error.stack || error);
  }
  window.__result = out;
</script>`;

describe.skipIf(missing !== null)('browser entry (Worker) in headless Chromium', () => {
  let server: Awaited<ReturnType<typeof startRouteServer>>;
  let context: BrowserContext;
  let modelDir: string;
  let node: FillMaskModel;

  /** Pages under /iso/ are cross-origin isolated, under /plain/ not; ORT's ESM build stands at ort-js/. */
  function route(path: string) {
    const ortDir = join(repoRoot, 'node_modules', 'onnxruntime-web', 'dist');
    const [area, ...rest] = path.split('/');
    const file = rest.join('/');
    if (area === 'test.html') return PAGE;
    if (area === 'memory.html') return MEMORY_PAGE;
    if (
      (area === 'memmodel' || area === 'badmem') &&
      ['model.json', 'vocab.txt', 'model.onnx', 'memory.bin'].includes(file)
    ) {
      const bytes = readFileSync(join(testMemoryModelDir(), file));
      if (area === 'badmem' && file === 'memory.bin') bytes[bytes.length - 10] ^= 1;
      return bytes;
    }
    if (area === 'spa') return { body: '<!doctype html><title>app</title>', type: 'text/html' };
    // ORT's ESM build finds its glue and wasm beside itself (the package ships no copy).
    if (area === 'ort-js' && /^ort(\.wasm\.min\.mjs|-wasm-simd-threaded\.(mjs|wasm))$/.test(file))
      return readFileSync(join(ortDir, file));
    if ((area === 'model' || area === 'tampered') && ['model.json', 'vocab.txt', 'model.onnx'].includes(file)) {
      const bytes = readFileSync(join(modelDir, file));
      if (area === 'tampered' && file === 'model.onnx') bytes[bytes.length - 1] ^= 1;
      return bytes;
    }
    if (area === 'dist') return readDistFile(distDir, file);
    if (
      area === 'model' &&
      /^default\/(model\.json|model\.onnx|vocab\.txt|memory\.bin|memory-ngrams\.bin|head\.bin)$/.test(file)
    )
      return readFileSync(join(repoRoot, 'model', file));
    return null;
  }

  beforeAll(async () => {
    modelDir = testModelDir();
    server = await startRouteServer(route);
    context = await launchChromium();
    node = await (await api()).createFillMask({ model: modelDir, backend: 'wasm' });
  });
  afterAll(async () => {
    await node?.dispose();
    await context?.close();
    await server?.close();
  });

  async function run(mode: 'iso' | 'plain', pageName = 'test.html'): Promise<Record<string, any>> {
    const page = await context.newPage();
    const logs: string[] = [];
    page.on('console', (m) => logs.push(m.text()));
    try {
      await page.goto(`${server.origin}/${mode}/${pageName}`);
      await page.waitForFunction(() => (window as { __result?: unknown }).__result !== undefined, null, {
        timeout: 120_000,
      });
      const result = await page.evaluate(() => (window as unknown as { __result: Record<string, any> }).__result);
      expect(result.error, logs.join('\n')).toBeUndefined();
      return result;
    } finally {
      await page.close();
    }
  }

  async function expectWorks(result: Record<string, any>) {
    // Same wasm (onnxruntime-web) as the Node wasm backend: same candidates.
    const expected = await node.fill(TEXT, { topK: 3 });
    expect(result.fill.masks.map((m: any) => m.candidates.map((c: any) => c.token))).toEqual(
      expected.masks.map((m) => m.candidates.map((c) => c.token)),
    );
    result.fill.masks[0].candidates.forEach((c: any, i: number) =>
      expect(c.score).toBeCloseTo(expected.masks[0]!.candidates[i]!.score, 5),
    );
    expect(result.again).toEqual(result.fill.masks);
    expect(result.superseded).toBe('ABORTED');
    expect(result.kept).toBe(4);
    expect(result.batch).toEqual(['[MASK]天', '秋[MASK]']);
    // explain and joint decoding through the Worker: the same as in Node on the same wasm.
    const explained = await node.explain(TEXT, 0, result.fill.masks[0].candidates[0].token);
    expect(result.explain.tokens.map((t: any) => [t.token, t.start, t.end])).toEqual(
      explained.tokens.map((t) => [t.token, t.start, t.end]),
    );
    result.explain.tokens.forEach((t: any, i: number) =>
      expect(t.score ?? 0).toBeCloseTo(explained.tokens[i]!.score ?? 0, 4),
    );
    const words = (await node.fill('[MASK][MASK]天', { joint: true, beam: 2, topK: 2 })).words!;
    expect(result.words.map((w: any) => w.candidates.map((c: any) => c.text))).toEqual(
      words.map((w) => w.candidates.map((c) => c.text)),
    );
    expect(result.codes).toEqual({
      noMask: 'NO_MASK',
      empty: 'EMPTY_INPUT',
      badOption: 'BAD_OPTION',
      batchIndex: 1,
      disposed: 'DISPOSED',
      integrity: 'INTEGRITY',
      html: 'BAD_MODEL',
      network: 'NETWORK',
    });
    expect(result.defaultModel).toEqual({ name: 'tiankong-default', top: '鸟' });
    const onnx = result.firstLoad.filter((p: any) => p.file === 'model.onnx');
    expect(onnx.at(-1)).toMatchObject({ source: 'network', loaded: readFileSync(join(modelDir, 'model.onnx')).length });
    // Second load reads the model from Cache Storage; the tampered model.onnx left no entry
    // (its intact vocab.txt was verified and stored).
    expect(result.secondLoad.filter((p: any) => p.file !== 'model.json').map((p: any) => p.source)).toEqual([
      'cache',
      'cache',
    ]);
    const manifest = JSON.parse(readFileSync(join(modelDir, 'model.json'), 'utf8'));
    const keys = result.cacheKeys.filter((k: string) => k.startsWith(`/${result.mode}/`)).sort();
    expect(keys).toEqual([
      `/${result.mode}/model/model.onnx?tiankong-sha256=${manifest.files['model.onnx'].sha256}`,
      `/${result.mode}/model/vocab.txt?tiankong-sha256=${manifest.files['vocab.txt'].sha256}`,
      `/${result.mode}/tampered/vocab.txt?tiankong-sha256=${manifest.files['vocab.txt'].sha256}`,
    ]);
  }

  test('cross-origin isolated page: threads', async () => {
    const result: Record<string, any> = { ...(await run('iso')), mode: 'iso' };
    await expectWorks(result);
    expect(result.stats).toMatchObject({ backend: 'wasm', simd: true, core: { build: 'single' } });
    expect(result.stats.threads).toBeGreaterThan(1);
  });

  test('page without COOP/COEP: one thread, and stats says why', async () => {
    const result: Record<string, any> = { ...(await run('plain')), mode: 'plain' };
    await expectWorks(result);
    expect(result.stats).toMatchObject({
      threads: 1,
      threadsReason: expect.stringMatching(/not cross-origin isolated.*Cross-Origin-Embedder-Policy/),
    });
  });

  test('the corpus memory through the Worker: downloaded, cached, verified, fused with sources', async () => {
    const result = await run('iso', 'memory.html');
    expect(result.fill.masks[0].candidates[0]).toMatchObject({
      token: '上',
      source: { title: '静夜思', work: '千家诗' },
    });
    expect(result.alone.masks[0].candidates.every((c: any) => c.source === undefined)).toBe(true);
    expect(result.memory).toMatchObject({
      maxOrder: 5,
      bytes: readFileSync(join(testMemoryModelDir(), 'memory.bin')).length,
    });
    expect(result.firstLoad.filter((p: any) => p.file === 'memory.bin').at(-1)).toMatchObject({ source: 'network' });
    expect(result.secondLoad.filter((p: any) => p.file === 'memory.bin').map((p: any) => p.source)).toEqual(['cache']);
    expect(result.badMemory).toBe('INTEGRITY');
    expect(result.skipped).not.toContain('memory.bin'); // memory: false does not even download it
    expect(result.withoutStats).toBeNull();
    expect(result.cacheKeys.filter((k: string) => k.endsWith('memory.bin') && !k.includes('/model/default/'))).toEqual([
      '/iso/memmodel/memory.bin',
    ]);
  });
});
