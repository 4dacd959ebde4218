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

/**
 * Builds the app with `modelDir` and measures `profiles` first visits and as many second visits.
 * @returns {Promise<{model: string, profiles: number, first_visit_ms: number[], second_visit_ms: number[],
 *   bytes_first_visit_to_answer: number[], bytes_second_visit_to_answer: number[]}>}
 */
export async function measureAppVisits({ repoRoot, modelDir, profiles = 3 }) {
  const work = mkdtempSync(join(tmpdir(), 'tiankong-bench-app-'));
  const previous = process.env.TIANKONG_MODEL_DIR;
  process.env.TIANKONG_MODEL_DIR = modelDir;
  try {
    await build({
      configFile: join(repoRoot, 'web/app/vite.config.ts'),
      logLevel: 'warn',
      build: { outDir: join(work, 'app'), emptyOutDir: true },
    });
  } finally {
    if (previous === undefined) delete process.env.TIANKONG_MODEL_DIR;
    else process.env.TIANKONG_MODEL_DIR = previous;
  }
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
