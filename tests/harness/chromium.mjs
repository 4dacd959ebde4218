// @ts-check
/**
 * The one Chromium launcher of the repository: Debian's /usr/bin/chromium through
 * playwright-core, headless, with the flags that work as root on this closed network
 * (shared/docs/toolchain.md), in a fresh temporary profile that is removed when the browser
 * closes. Used by the browser tests, scripts/soak and the benchmarks (bench/lib/browser.mjs).
 *
 * Plain ESM with JSDoc types: scripts/soak and the benchmarks run it in Node without a
 * TypeScript step.
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian's Chromium (apt-get install chromium). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Launch flags (playwright adds --headless): the toolchain's list, plus eager memory
 * measurement so performance.measureUserAgentSpecificMemory() answers at once instead of at
 * the next scheduled GC.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--enable-blink-features=ForceEagerMeasureMemory',
];

/** Host resolution fails for every host but 127.0.0.1: a remote fetch errors instead of reaching the network. */
const LOCAL_ONLY = '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1';

/**
 * Launches Chromium with a persistent context in `userDataDir` (default: a fresh temporary
 * profile, so no service worker or cache survives from another run; it is removed when the
 * context closes — a caller's own directory is the caller's).
 * @param {object} [options]
 * @param {string} [options.userDataDir]
 * @param {{ width: number, height: number }} [options.viewport]
 * @param {boolean} [options.localOnly] resolve no host but 127.0.0.1 (the benchmark's proof that it ran offline)
 * @param {boolean} [options.mobile] a phone: touch, mobile viewport meta honoured
 * @returns {Promise<import('playwright-core').BrowserContext>}
 */
export async function launchChromium({ userDataDir, viewport, localOnly = false, mobile = false } = {}) {
  const { chromium } = await import('playwright-core');
  const profile = userDataDir ?? mkdtempSync(join(tmpdir(), 'tiankong-chromium-'));
  const removeProfile = () =>
    rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch(() => {});
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      ...(viewport ? { viewport } : {}),
      ...(mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 3 } : {}),
      args: [...CHROMIUM_ARGS, ...(localOnly ? [LOCAL_ONLY] : [])],
    });
  } catch (error) {
    if (userDataDir === undefined) await removeProfile();
    throw error;
  }
  // Chromium's helpers can still be writing into the profile right after 'close': retry, and
  // leave it to the OS's temp cleanup rather than fail a run over a temp directory.
  if (userDataDir === undefined) {
    context.on('close', () => void removeProfile());
  }
  return context;
}
