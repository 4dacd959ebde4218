// First visit of the app built with the shipped default model (model/default: model + corpus
// memory), served by scripts/serve.mjs (precompressed brotli/gzip) to a fresh headless Chromium:
// bytes transferred until the first answer (the corpus memory's preview, from memory.bin alone)
// and until the model's, for the whole visit (offline copy included), and the times from
// navigation on localhost. The numbers go to bench/results/tmp/app-first-visit.json and the
// console; BENCHMARKS.md ("App: first visit") reports them. The byte budget of the first answer is
// issue 24's (≤ 6 MB, what a phone on 9 Mbit/s gets in ~5 s); time budgets are loose (a loaded
// 2-core machine; bench/phone.mjs measures the phone profile).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAppServer } from '../../scripts/serve.mjs';
import { REPO, buildApp, launchBrowser, missingPrerequisite } from './harness.js';
import { FIRST_ANSWER_RECORDER } from '../../bench/lib/app-visits.mjs';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

interface Sent {
  url: string;
  status: number;
  bytes: number;
  at: number;
}

describe.skipIf(missing !== null)('first visit with the default model', () => {
  let workDir: string;
  let server: Awaited<ReturnType<typeof startAppServer>>;
  let context: BrowserContext;
  let page: Page;
  const sent: Sent[] = [];

  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'tiankong-first-visit-'));
    await buildApp(path.join(REPO, 'model/default'), path.join(workDir, 'app'));
    server = await startAppServer({
      root: path.join(workDir, 'app'),
      onRequest: ({ url, status, bytes }) => sent.push({ url, status, bytes, at: Date.now() }),
    });
    context = await launchBrowser();
    await context.addInitScript(FIRST_ANSWER_RECORDER);
    page = context.pages()[0] ?? (await context.newPage());
  });

  afterAll(async () => {
    await context?.close();
    await server?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  test('bytes and time to the first answer; the model download starts at once; idioms wait until needed', async () => {
    const start = Date.now();
    await page.goto(`${server.origin}/`);
    // A user who clicks an example at once: the page predicts as soon as the model is ready.
    await page.locator('[data-example]', { hasText: '春眠不觉晓' }).click();
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { __firstAnswerMs?: number }).__firstAnswerMs ?? null), {
        timeout: 180_000,
        interval: 50,
      })
      .not.toBeNull();
    const firstAnswerMs = await page.evaluate(() => (window as unknown as { __firstAnswerMs: number }).__firstAnswerMs);
    const answeredAt = Date.now();
    // The first answer is the memory's preview, marked as such, and already right.
    const firstIsPreview = await page.getByTestId('preview-note').isVisible();
    expect(await page.getByTestId('candidate').first().getAttribute('data-token')).toBe('鸟');
    // Then the model's answer replaces it (the note goes away).
    await expect
      .poll(() => page.getByTestId('preview-note').isVisible(), { timeout: 180_000, interval: 50 })
      .toBe(false);
    const modelAnsweredAt = Date.now();
    expect(await page.getByTestId('candidate').first().getAttribute('data-token')).toBe('鸟');
    // The idiom dictionary is fetched only after the answer showed a filled blank inside Chinese text.
    const idiomFetchStart = await page.evaluate(
      () =>
        performance.getEntriesByType('resource').find((e) => new URL(e.name).pathname === '/idioms.json')?.startTime ??
        null,
    );
    // The app starts that fetch in the task that renders the answer, before the recorder's observer
    // runs; on a loaded machine the gap reached ~0.5 s. Fetched during loading would be seconds earlier.
    expect(
      idiomFetchStart === null || idiomFetchStart >= firstAnswerMs - 1000,
      `idioms.json at ${idiomFetchStart} ms`,
    ).toBe(true);
    const untilAnswer = sent.filter((r) => r.at <= answeredAt && r.url !== '/idioms.json');
    const bytesToAnswer = untilAnswer.reduce((sum, r) => sum + r.bytes, 0);
    const bytesToModelAnswer = sent
      .filter((r) => r.at <= modelAnsweredAt && r.url !== '/idioms.json')
      .reduce((sum, r) => sum + r.bytes, 0);
    const memoryAt = sent.findIndex((r) => r.url === '/models/default/memory.bin' && r.status === 200);
    const beforePreview = sent.slice(0, memoryAt + 1);
    const bytesForPreview = beforePreview.reduce((sum, r) => sum + r.bytes, 0);

    // The rest of the visit: the service worker's offline copy (mostly 304s) and the idiom card's data.
    await expect.poll(() => page.getByTestId('status').textContent(), { timeout: 120_000 }).toMatch(/已可离线使用/);
    await page.waitForTimeout(500);
    const bytesVisit = sent.reduce((sum, r) => sum + r.bytes, 0);
    const byFile = Object.fromEntries(
      sent.filter((r) => r.bytes > 50_000).map((r) => [`${r.url} (${r.status})`, r.bytes]),
    );

    // The model download starts before (not after) the service worker's precache, each file once.
    const firstModel = sent.findIndex((r) => r.url.startsWith('/models/default/model.onnx'));
    const firstWorker = sent.findIndex((r) => r.url.startsWith('/sw.js'));
    expect(firstModel).toBeGreaterThanOrEqual(0);
    expect(firstWorker === -1 || firstModel < firstWorker, sent.map((r) => r.url).join(' ')).toBe(true);
    for (const file of ['model.onnx', 'head.bin', 'memory.bin', 'memory-ngrams.bin', 'vocab.txt']) {
      expect(
        sent.filter((r) => r.url === `/models/default/${file}` && r.status === 200),
        file,
      ).toHaveLength(1);
    }
    expect(sent.filter((r) => r.url.endsWith('ort-wasm-simd-threaded.wasm') && r.status === 200)).toHaveLength(1);
    expect(sent.filter((r) => r.url === '/idioms.json' && r.status === 200).length).toBeLessThanOrEqual(1);

    const report = {
      date: new Date().toISOString(),
      model: 'model/default',
      first_answer_ms: Math.round(firstAnswerMs),
      first_answer_wall_ms: answeredAt - start,
      first_answer_is_preview: firstIsPreview,
      bytes_to_first_answer: bytesToAnswer,
      bytes_the_preview_waits_for: bytesForPreview,
      model_answer_wall_ms: modelAnsweredAt - start,
      bytes_to_model_answer: bytesToModelAnswer,
      bytes_first_visit: bytesVisit,
      requests_first_visit: sent.length,
      large_responses: byFile,
    };
    const out = path.join(REPO, 'bench/results/tmp');
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, 'app-first-visit.json'), `${JSON.stringify(report, null, 2)}\n`);
    console.log(
      `first visit: first answer ${report.first_answer_ms} ms after navigation; ${(bytesToAnswer / 1e6).toFixed(2)} MB ` +
        `until then, ${(bytesVisit / 1e6).toFixed(2)} MB for the whole visit\n${JSON.stringify(byFile, null, 2)}`,
    );
    // The first answer needs the app, the core and memory.bin only (~3.6 MB brotli): the model,
    // ONNX Runtime's wasm and the longer n-grams are requested only once memory.bin has arrived
    // (on localhost they may still finish before the answer is drawn, so the budget counts what
    // was sent up to memory.bin: what the preview waits for).
    expect(firstIsPreview).toBe(true);
    expect(bytesForPreview, beforePreview.map((r) => `${r.url} ${r.bytes}`).join('\n')).toBeLessThanOrEqual(6e6);
    const late = ['model.onnx', 'head.bin', 'memory-ngrams.bin'].map((f) => `/models/default/${f}`);
    expect(
      beforePreview.filter((r) => late.includes(r.url) || (r.url.endsWith('.wasm') && r.url.includes('ort-'))),
    ).toEqual([]);
    // The model's answer: everything (~14 MB); the budget catches a file fetched twice or uncompressed.
    expect(bytesToModelAnswer).toBeLessThan(21e6);
    expect(firstAnswerMs).toBeLessThan(15_000);
  });
});
