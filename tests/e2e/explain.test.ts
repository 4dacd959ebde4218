// The app's attribution heatmap and 整词 list (web/app/src/explain-view.ts) in headless Chromium,
// built with the tiny test model: adjacent masks get whole-word candidates that fill the sentence
// when clicked; clicking a mask candidate colours the text by tk.explain() and marks the top 3,
// the same tokens and top 3 as the Node package computes for that candidate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  REPO,
  artifactPath,
  buildApp,
  launchBrowser,
  makeTinyModel,
  missingPrerequisite,
  serveApp,
  type ServedApp,
} from './harness.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const TEXT = '春眠[MASK][MASK]，处处闻啼鸟。';

describe.skipIf(missing !== null)('app: heatmap and whole-word candidates', () => {
  let workDir: string;
  let model: string;
  let app: ServedApp;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'tiankong-explain-e2e-'));
    model = await makeTinyModel(workDir);
    const out = path.join(workDir, 'app');
    await buildApp(model, out);
    app = await serveApp(out);
    context = await launchBrowser();
    page = context.pages()[0] ?? (await context.newPage());
  });

  afterAll(async () => {
    await context?.close();
    await app?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  test('loads and predicts two adjacent masks', async () => {
    await page.goto(`${app.origin}/`);
    await expect.poll(() => page.getByTestId('status').textContent(), { timeout: 120_000 }).toMatch(/模型已就绪/);
    // The tiny random model's probabilities are all below the default 1% threshold.
    await page.locator('details.options').evaluate((d: HTMLDetailsElement) => (d.open = true));
    await page.locator('#opt-threshold').selectOption('0');
    await page.getByTestId('input').fill(TEXT);
    await page.getByTestId('predict').click();
    await expect.poll(() => page.getByTestId('mask-result').count()).toBe(2);
  });

  test('整词: a run of two masks lists two-character words; clicking one fills both masks', async () => {
    const words = page.getByTestId('word-candidate');
    await expect.poll(() => words.count()).toBe(5);
    const texts = await words.evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.text ?? ''));
    for (const word of texts) expect([...word].length).toBe(2);
    await words.nth(2).click();
    expect(await page.getByTestId('filled').textContent()).toBe(TEXT.replace('[MASK][MASK]', texts[2]!));
    expect(await words.nth(2).getAttribute('aria-pressed')).toBe('true');
  });

  test('clicking a candidate shows the heatmap: every token, top 3 marked, as the Node package computes', async () => {
    const candidate = page.getByTestId('mask-result').nth(0).getByTestId('candidate').nth(1);
    const token = (await candidate.getAttribute('data-token'))!;
    await candidate.click();
    const tokens = page.getByTestId('heatmap-token');
    await expect.poll(() => tokens.count(), { timeout: 30_000 }).toBe([...'春眠▢▢，处处闻啼鸟。'].length);
    const shown = await tokens.evaluateAll((nodes) => nodes.map((n) => n.firstChild?.textContent ?? ''));
    expect(shown.join('')).toBe('春眠▢▢，处处闻啼鸟。');
    const { createFillMask } = await import(pathToFileURL(path.join(REPO, 'dist/index.js')).href);
    const tk = await createFillMask({ model, backend: 'wasm' });
    try {
      const expected = await tk.explain(TEXT, 0, token);
      const ranks = await tokens.evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.rank ?? ''));
      const top = ranks
        .flatMap((rank, index) => (rank ? [[Number(rank), index]] : []))
        .sort((a, b) => a[0]! - b[0]!)
        .map(([, index]) => index);
      expect(top.length).toBe(expected.top.length);
      // Near-equal scores may swap between thread counts; the marked set must hold the strongest token.
      expect(top).toContain(expected.top[0]);
      const coloured = await tokens.evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).style.backgroundColor));
      expect(coloured.filter((c) => c.startsWith('rgba(239, 68, 68')).length).toBe(
        expected.tokens.filter((t: { score: number | null }) => t.score !== null && t.score > 0).length,
      );
    } finally {
      await tk.dispose();
    }
    expect(await page.locator('.heatmap-title').textContent()).toBe(`为什么是「${token}」？`);
    await page.getByTestId('heatmap').screenshot({ path: artifactPath('heatmap.png') });
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await page.getByTestId('word-results').screenshot({ path: artifactPath('words-360.png') });
  });
});
