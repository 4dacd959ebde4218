// Shared setup of the app's browser tests: the tiny test model, a production build of the app
// with it, the app's own static server (scripts/serve.mjs) with a log of what reached it, and
// Debian's Chromium (the one launcher, tests/harness/chromium.mjs).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { startAppServer } from '../../scripts/serve.mjs';
import { CHROMIUM, launchChromium } from '../harness/chromium.mjs';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const ARTIFACTS = path.join(REPO, 'tests/e2e/artifacts');

/** Why the browser tests cannot run here, or null. */
export function missingPrerequisite(): string | null {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} not found (apt-get install chromium): app browser tests skipped`;
  if (!existsSync(path.join(REPO, 'dist/browser.js')))
    return 'dist/browser.js missing (run bash scripts/build): app browser tests skipped';
  if (!existsSync(path.join(REPO, 'dist/core/wasm/tiankong-core.wasm')))
    return 'dist/core/wasm missing (run scripts/build-wasm): app browser tests skipped';
  return null;
}

/**
 * Generates the tiny random INT8 test model (scripts/make-test-model) and returns its mask-only
 * directory. Asynchronous: a blocked test worker misses vitest's RPC deadlines.
 */
export async function makeTinyModel(workDir: string): Promise<string> {
  const out = path.join(workDir, 'model');
  await promisify(execFile)('bash', [path.join(REPO, 'scripts/make-test-model'), out]);
  return path.join(out, 'mask-only');
}

/** Builds the app (web/app/vite.config.ts) with `modelDir` into `outDir`. */
export async function buildApp(modelDir: string, outDir: string): Promise<void> {
  const previous = process.env.TIANKONG_MODEL_DIR;
  process.env.TIANKONG_MODEL_DIR = modelDir;
  try {
    await build({
      configFile: path.join(REPO, 'web/app/vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
    });
  } finally {
    if (previous === undefined) delete process.env.TIANKONG_MODEL_DIR;
    else process.env.TIANKONG_MODEL_DIR = previous;
  }
}

export interface ServedApp {
  origin: string;
  /** Every request that reached the server, in order ("GET /path"). */
  log: string[];
  close(): Promise<void>;
}

/** Serves `root` with scripts/serve.mjs; `headers` replaces its security headers (`{}`: a host that sends none). */
export async function serveApp(root: string, options: { headers?: Record<string, string> } = {}): Promise<ServedApp> {
  const log: string[] = [];
  const server = await startAppServer({
    root,
    headers: options.headers,
    onRequest: ({ method, url }) => log.push(`${method} ${url}`),
  });
  return { origin: server.origin, log, close: server.close };
}

/** A fresh Chromium profile (so no service worker or cache survives from another run). */
export function launchBrowser(): Promise<BrowserContext> {
  return launchChromium({ viewport: { width: 1280, height: 900 } });
}

export function artifactPath(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}

/** The visible controls matching `selector` shorter than a 44 px touch target (text and height). */
export function smallTouchTargets(page: Page, selector: string): Promise<Array<{ text?: string; h: number }>> {
  return page
    .locator(selector)
    .evaluateAll((nodes) =>
      nodes
        .map((n) => ({ text: n.textContent?.trim().slice(0, 20), h: n.getBoundingClientRect().height }))
        .filter((b) => b.h < 44),
    );
}
