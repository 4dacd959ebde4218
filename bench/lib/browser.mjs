// Headless Chromium for the benchmark (Debian's /usr/bin/chromium through playwright-core),
// with a guard that proves the run is offline: every request any page or Worker makes is
// recorded, and host resolution outside 127.0.0.1 is disabled, so a remote fetch fails
// instead of silently reaching the network.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Launches a fresh profile. `requests` collects every URL requested (pages and Workers).
 * @returns {Promise<{context, requests: string[], close(): Promise<void>}>}
 */
export async function launchBrowser() {
  const userDataDir = mkdtempSync(join(tmpdir(), 'tiankong-bench-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      // measureUserAgentSpecificMemory answers at once instead of at the next scheduled GC.
      '--enable-blink-features=ForceEagerMeasureMemory'],
  });
  const requests = [];
  context.on('request', (request) => requests.push(request.url()));
  return {
    context,
    requests,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Opens the harness page and waits for window.bench; console errors are kept in `logs`. */
export async function openHarness(context, origin) {
  const page = await context.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
  await page.goto(`${origin}/bench/index.html`);
  await page.waitForFunction(() => window.bench !== undefined, null, { timeout: 60_000 }).catch((error) => {
    throw new Error(`the harness page did not start: ${error.message}\n${logs.join('\n')}`);
  });
  return { page, logs };
}
