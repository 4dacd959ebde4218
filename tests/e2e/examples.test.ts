// The app built with the shipped default model (model/default: model + corpus memory), in
// headless Chromium: every example chip of the page puts the expected answer first, famous
// lines and idioms show their source (出处) under the candidate, and a blank with a reading
// ([MASK:an4]) says so above its candidates, which carry their pinyin.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPO, buildApp, launchBrowser, missingPrerequisite, serveApp, type ServedApp } from './harness.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

/** Chip label -> the expected first candidate of each mask, and a source title expected for mask 0. */
const EXPECTED: Record<string, { first: string[]; source?: RegExp; constraint?: string; pinyin?: string }> = {
  '诗词 · 床前明月光': { first: ['上'], source: /李白.*静夜思/ },
  '诗词 · 春眠不觉晓': { first: ['鸟'], source: /孟浩然.*春晓/ },
  '成语 · 掩耳盗…': { first: ['铃'], source: /成语.*掩耳盗铃/ },
  '日常 · 天气': { first: ['好'] },
  '三处 · 游子吟': { first: ['线', '衣', '缝'], source: /孟郊.*游子吟/ },
  '读音 · 江南[MASK:an4]': { first: ['岸'], constraint: '读 àn', pinyin: 'àn' },
};

describe.skipIf(missing !== null)('the example chips with the default model', () => {
  let workDir: string;
  let app: ServedApp;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'tiankong-examples-'));
    await buildApp(path.join(REPO, 'model/default'), path.join(workDir, 'app'));
    app = await serveApp(path.join(workDir, 'app'));
    context = await launchBrowser();
    page = context.pages()[0] ?? (await context.newPage());
  });

  afterAll(async () => {
    await context?.close();
    await app?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  test('every chip: the expected answer first, with its source', async () => {
    await page.goto(`${app.origin}/`);
    await expect.poll(() => page.getByTestId('status').textContent(), { timeout: 180_000 }).toMatch(/模型已就绪/);
    const labels = await page.locator('[data-example]').allTextContents();
    expect(labels.sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const label of labels) {
      const { first, source, constraint, pinyin } = EXPECTED[label]!;
      await page.locator('[data-example]', { hasText: label }).click();
      const example = await page.locator('[data-example]', { hasText: label }).getAttribute('data-example');
      // The page predicts on its own after a chip; wait for this text's results.
      await expect.poll(async () => page.getByTestId('mask-result').count(), { timeout: 60_000 }).toBe(first.length);
      await expect
        .poll(
          async () => {
            const tops = [];
            for (let i = 0; i < first.length; i++) {
              tops.push(
                await page
                  .getByTestId('mask-result')
                  .nth(i)
                  .getByTestId('candidate')
                  .first()
                  .getAttribute('data-token'),
              );
            }
            return tops;
          },
          { timeout: 60_000, message: `${label}: ${example}` },
        )
        .toEqual(first);
      const card = page.getByTestId('mask-result').first();
      // Every candidate shows its reading above it; a constrained blank says what it must sound like.
      if (pinyin) expect(await card.locator('.candidate-pinyin').first().textContent(), label).toBe(pinyin);
      if (constraint) expect(await card.getByTestId('mask-constraint').textContent(), label).toBe(constraint);
      if (source) {
        const line = page.getByTestId('mask-result').first().getByTestId('candidate-source').first();
        expect(await line.textContent(), label).toMatch(source);
      }
    }
  });
});
