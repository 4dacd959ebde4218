// Headless Chromium for the benchmark (the repository's one launcher, tests/harness/chromium.mjs),
// with a guard that proves the run is offline: every request any page or Worker makes is
// recorded, and host resolution outside 127.0.0.1 is disabled, so a remote fetch fails
// instead of silently reaching the network.
import { launchChromium } from '../../tests/harness/chromium.mjs';

/**
 * Launches a fresh profile (removed on close). `requests` collects every URL requested (pages and Workers).
 * @returns {Promise<{context: import('playwright-core').BrowserContext, requests: string[], close(): Promise<void>}>}
 */
export async function launchBrowser() {
  const context = await launchChromium({ localOnly: true });
  const requests = [];
  context.on('request', (request) => requests.push(request.url()));
  return { context, requests, close: () => context.close() };
}

/** Opens the harness page and waits for window.bench; console errors are kept in `logs`. */
export async function openHarness(context, origin) {
  const page = await context.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
  await page.goto(`${origin}/bench/index.html`);
  await page
    .waitForFunction(() => window.bench !== undefined, null, { timeout: 60_000 })
    .catch((error) => {
      throw new Error(`the harness page did not start: ${error.message}\n${logs.join('\n')}`);
    });
  return { page, logs };
}
