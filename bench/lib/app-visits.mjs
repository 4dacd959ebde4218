// Cold start as a user meets it: the app (web/app) built with a model directory, served by
// scripts/serve.mjs (precompressed, revalidated) on localhost, opened in headless Chromium. The
// user clicks an example at once; the time is from navigation start to the first candidate on
// screen. First visit: a fresh profile (nothing cached). Second visit: the same profile opened
// again after the service worker reported the offline copy (app files from its precache, the
// model from Cache Storage, wasm compiled code cached by Chromium). Same flow as
// tests/e2e/first-visit.test.ts, repeated on fresh profiles for a median.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { build } from 'vite';
import { startAppServer } from '../../scripts/serve.mjs';
import { launchChromium } from '../../tests/harness/chromium.mjs';

/** Init script: records in the page when the first answer appears (window.__firstAnswerMs, ms since navigation start). */
export const FIRST_ANSWER_RECORDER = `
  new MutationObserver((_, observer) => {
    if (document.querySelector('[data-testid=candidate]')) {
      window.__firstAnswerMs = performance.now();
      observer.disconnect();
    }
  }).observe(document, { subtree: true, childList: true });
`;
const EXAMPLE = '春眠不觉晓';
const OFFLINE_READY = /已可离线使用/;

/** Opens the app in `page`, clicks the example, returns ms from navigation start to the first candidate. */
async function timeToFirstAnswer(page, origin) {
  await page.goto(`${origin}/`);
  await page.locator('[data-example]', { hasText: EXAMPLE }).click();
  await page.waitForFunction(() => window.__firstAnswerMs !== undefined, null, { timeout: 180_000, polling: 50 });
  return Math.round(await page.evaluate(() => window.__firstAnswerMs));
}

/** Builds the app with `modelDir` into `outDir` (the Vite build scripts/start runs). */
async function buildAppWith(repoRoot, modelDir, outDir) {
  const previous = process.env.TIANKONG_MODEL_DIR;
  process.env.TIANKONG_MODEL_DIR = modelDir;
  try {
    await build({
      configFile: join(repoRoot, 'web/app/vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
    });
  } finally {
    if (previous === undefined) delete process.env.TIANKONG_MODEL_DIR;
    else process.env.TIANKONG_MODEL_DIR = previous;
  }
}

/** The phone profile of issue 24: a mid-range phone on a mobile link. */
export const PHONE_PROFILE = Object.freeze({
  viewport: { width: 390, height: 844 },
  cpuSlowdown: 4,
  bitsPerSecond: 9e6,
  latencyMs: 150,
});

/** Page + Worker memory (performance.measureUserAgentSpecificMemory; the page is cross-origin isolated), or null. */
async function pageMemoryBytes(page) {
  return page.evaluate(async () => {
    if (typeof performance.measureUserAgentSpecificMemory !== 'function') return null;
    const timeout = new Promise((resolve) => setTimeout(() => resolve(null), 60_000));
    const measured = await Promise.race([performance.measureUserAgentSpecificMemory(), timeout]);
    return measured ? measured.bytes : null;
  });
}

/**
 * The phone profile (PHONE_PROFILE): Chromium with a 390×844 touch viewport and its CPU slowed
 * 4×, behind a 9 Mbit/s link with 150 ms latency (bench/lib/throttle.mjs). The user taps the
 * 春眠不觉晓 example at once. First visit (empty profile): time and bytes until the first answer
 * (the memory's preview when the model has a split memory) and until the model's answer; then,
 * once the offline copy is saved, page + Worker memory. Second visit: a new tab of the same profile.
 * Times are ms from navigation start, bytes as sent by scripts/serve.mjs (brotli).
 */
export async function measurePhoneVisits({ repoRoot, modelDir, profile = PHONE_PROFILE }) {
  const { startThrottledProxy } = await import('./throttle.mjs');
  const work = mkdtempSync(join(tmpdir(), 'tiankong-bench-phone-'));
  await buildAppWith(repoRoot, modelDir, join(work, 'app'));
  let bytes = 0;
  /** Bytes delivered per path (over the slow link) in this visit, in the order they completed. */
  let delivered = new Map();
  const server = await startAppServer({ root: join(work, 'app') });
  const proxy = await startThrottledProxy({
    target: server.origin,
    latencyMs: profile.latencyMs,
    bitsPerSecond: profile.bitsPerSecond,
    onDelivered: (path, n) => {
      bytes += n;
      delivered.set(path, (delivered.get(path) ?? 0) + n);
    },
  });
  /** The files delivered so far, largest first, in kB. */
  const deliveredFiles = () =>
    Object.fromEntries(
      [...delivered]
        .filter(([, n]) => n > 20_000)
        .sort((a, b) => b[1] - a[1])
        .map(([path, n]) => [path, Math.round(n / 1000)]),
    );
  const context = await launchChromium({ viewport: profile.viewport, mobile: true, localOnly: true });
  const result = { model: relative(repoRoot, modelDir), profile };
  try {
    const visit = async (page) => {
      const cdp = await context.newCDPSession(page);
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: profile.cpuSlowdown });
      bytes = 0;
      delivered = new Map();
      await page.goto(`${proxy.origin}/`);
      await page.locator('[data-example]', { hasText: EXAMPLE }).tap();
      await page.waitForFunction(() => window.__firstAnswerMs !== undefined, null, { timeout: 300_000, polling: 50 });
      const first = {
        first_answer_ms: Math.round(await page.evaluate(() => window.__firstAnswerMs)),
        bytes_to_first_answer: bytes,
        first_answer_is_preview: await page.getByTestId('preview-note').isVisible(),
        first_answer_token: await page.getByTestId('candidate').first().getAttribute('data-token'),
        kb_by_file_at_first_answer: deliveredFiles(),
      };
      // The model's answer: the preview note gone, candidates shown.
      await page.waitForFunction(
        () =>
          document.querySelector('[data-testid=preview-note]')?.hidden !== false &&
          document.querySelector('[data-testid=candidate]'),
        null,
        { timeout: 300_000, polling: 50 },
      );
      return {
        ...first,
        model_answer_ms: Math.round(await page.evaluate(() => performance.now())),
        bytes_to_model_answer: bytes,
        model_answer_token: await page.getByTestId('candidate').first().getAttribute('data-token'),
      };
    };
    await context.addInitScript(FIRST_ANSWER_RECORDER);
    let page = context.pages()[0] ?? (await context.newPage());
    result.first_visit = await visit(page);
    await page.getByTestId('status').filter({ hasText: OFFLINE_READY }).waitFor({ timeout: 600_000 });
    result.first_visit.bytes_whole_visit = bytes;
    result.first_visit.memory_bytes = await pageMemoryBytes(page);
    await page.close();
    page = await context.newPage();
    result.second_visit = await visit(page);
    console.log(
      `  phone: first visit ${result.first_visit.first_answer_ms} ms to the first answer ` +
        `(${(result.first_visit.bytes_to_first_answer / 1e6).toFixed(2)} MB, preview ${result.first_visit.first_answer_is_preview}), ` +
        `${result.first_visit.model_answer_ms} ms to the model's; second visit ${result.second_visit.first_answer_ms} ms`,
    );
  } finally {
    await context.close();
    await proxy.close();
    await server.close();
    rmSync(work, { recursive: true, force: true });
  }
  return result;
}

/**
 * Builds the app with `modelDir` and measures `profiles` first visits and as many second visits.
 * @returns {Promise<{model: string, profiles: number, first_visit_ms: number[], second_visit_ms: number[],
 *   bytes_first_visit_to_answer: number[], bytes_second_visit_to_answer: number[]}>}
 */
export async function measureAppVisits({ repoRoot, modelDir, profiles = 3 }) {
  const work = mkdtempSync(join(tmpdir(), 'tiankong-bench-app-'));
  await buildAppWith(repoRoot, modelDir, join(work, 'app'));
  let bytes = 0;
  const server = await startAppServer({ root: join(work, 'app'), onRequest: (r) => (bytes += r.bytes) });
  const result = {
    model: relative(repoRoot, modelDir),
    profiles,
    first_visit_ms: [],
    second_visit_ms: [],
    bytes_first_visit_to_answer: [],
    bytes_second_visit_to_answer: [],
  };
  try {
    for (let i = 0; i < profiles; i++) {
      const context = await launchChromium({ viewport: { width: 1280, height: 900 }, localOnly: true });
      try {
        await context.addInitScript(FIRST_ANSWER_RECORDER);
        let page = context.pages()[0] ?? (await context.newPage());
        bytes = 0;
        result.first_visit_ms.push(await timeToFirstAnswer(page, server.origin));
        result.bytes_first_visit_to_answer.push(bytes);
        await page.getByTestId('status').filter({ hasText: OFFLINE_READY }).waitFor({ timeout: 180_000 });
        await page.close();
        page = await context.newPage();
        bytes = 0;
        result.second_visit_ms.push(await timeToFirstAnswer(page, server.origin));
        result.bytes_second_visit_to_answer.push(bytes);
      } finally {
        await context.close();
      }
      console.log(
        `  app visit ${i + 1}/${profiles}: first answer ${result.first_visit_ms.at(-1)} ms (first visit), ` +
          `${result.second_visit_ms.at(-1)} ms (second visit)`,
      );
    }
  } finally {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  }
  return result;
}
