// The app's 纠错 mode with the shipped default model, in headless Chromium, used as a person
// would: switch to 纠错, type (offline), see the wrong characters underlined while typing, tap one
// to see its suggestions with pinyin, accept one, accept all, ignore one, a text too long for the
// model, and the mode remembered on the next visit. Expected corrections are ones the default
// model makes on the CLI as well (tiankong check), so the page is tested, not the model.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  REPO,
  artifactPath,
  buildApp,
  launchBrowser,
  missingPrerequisite,
  serveApp,
  type ServedApp,
  smallTouchTargets,
} from './harness.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const TWO_ERRORS = '我门明天一起去图书馆，以经约好了。';

describe.skipIf(missing !== null)('app: 纠错 mode with the default model', () => {
  let workDir: string;
  let app: ServedApp;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'tiankong-check-mode-'));
    await buildApp(path.join(REPO, 'model/default'), path.join(workDir, 'app'));
    app = await serveApp(path.join(workDir, 'app'));
    context = await launchBrowser();
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${app.origin}/`);
    await page.getByTestId('status').filter({ hasText: '模型已就绪' }).waitFor({ timeout: 180_000 });
  });

  afterAll(async () => {
    await context?.close();
    await app?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  /** The underlined characters, in text order. */
  const underlined = () => page.locator('[data-testid="typo-layer"] .mark-typo').allTextContents();
  /** The list under the editor: "门→们" per flagged character. */
  const items = async () =>
    (await page.getByTestId('check-item').all()).length === 0
      ? []
      : Promise.all(
          (await page.getByTestId('check-item').all()).map(async (item) =>
            [
              await item.locator('.check-original').textContent(),
              await item.locator('.check-suggestion').textContent(),
            ].join('→'),
          ),
        );
  const status = () => page.getByTestId('check-status').textContent();

  test('switching to 纠错 shows its own editor: no [MASK] buttons or fill results, a status line', async () => {
    await page.getByTestId('mode-check').click();
    expect(await page.getByTestId('mode-check').getAttribute('aria-pressed')).toBe('true');
    expect(await page.getByTestId('predict').isVisible()).toBe(false);
    expect(await page.getByTestId('insert-mask').isVisible()).toBe(false);
    await expect.poll(status).toMatch(/自动找出可能写错的字/);
  });

  test('typing offline: the wrong characters are underlined once typing pauses, and listed with their fixes', async () => {
    await context.setOffline(true); // everything runs on the device
    const input = page.getByTestId('input');
    await input.fill('');
    await input.pressSequentially(TWO_ERRORS, { delay: 40 });
    await expect.poll(underlined, { timeout: 30_000 }).toEqual(['门', '以']);
    expect(await items()).toEqual(['门→们', '以→已']);
    expect(await status()).toMatch(/发现 2 处/);
    expect(await page.getByTestId('timings').textContent()).toMatch(/纠错 \d+ 字/);
  });

  test('a tap on an underlined character shows its suggestions with pinyin; one tap accepts it', async () => {
    const mark = page.locator('[data-testid="typo-layer"] .mark-typo').first();
    const box = (await mark.boundingBox())!;
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2); // the textarea lies over it
    const suggestions = page.getByTestId('check-suggestions');
    await suggestions.waitFor();
    const first = suggestions.getByTestId('check-candidate').first();
    expect(await first.locator('.check-candidate-token').textContent()).toBe('们');
    expect(await first.locator('.check-candidate-pinyin').textContent()).toMatch(/men/);
    await first.click();
    expect(await page.getByTestId('input').inputValue()).toBe('我们明天一起去图书馆，以经约好了。');
    // The flag the edit did not touch stays put at once, and the recheck agrees.
    expect(await underlined()).toEqual(['以']);
    await expect.poll(status, { timeout: 30_000 }).toMatch(/发现 1 处/);
    expect(await items()).toEqual(['以→已']);
  });

  test('全部接受 applies every suggestion; the text then checks clean', async () => {
    await page.getByTestId('input').fill(TWO_ERRORS);
    await expect.poll(items, { timeout: 30_000 }).toEqual(['门→们', '以→已']);
    await page.getByTestId('check-accept-all').click();
    expect(await page.getByTestId('input').inputValue()).toBe('我们明天一起去图书馆，已经约好了。');
    await expect.poll(status, { timeout: 30_000 }).toMatch(/没有发现错字/);
    expect(await underlined()).toEqual([]);
  });

  test('ignoring a character leaves the text as it is and never flags that character again', async () => {
    const text = '请大家安静，会义马上开始。';
    await page.getByTestId('input').fill(text);
    await expect.poll(items, { timeout: 30_000 }).toEqual(['义→议']);
    await page.getByTestId('check-item').first().click();
    await page.getByTestId('check-ignore').click();
    expect(await page.getByTestId('input').inputValue()).toBe(text);
    expect(await items()).toEqual([]);
    await page.getByTestId('input').fill(`${text}我门走吧。`);
    await expect.poll(items, { timeout: 30_000 }).toEqual(['门→们']);
  });

  test('a text too long for the model says so; the next text is checked as usual', async () => {
    await page.getByTestId('input').fill('我们明天一起去图书馆。'.repeat(60));
    await expect.poll(status, { timeout: 30_000 }).toMatch(/句子太长了/);
    expect(await underlined()).toEqual([]);
    await page.getByTestId('input').fill(TWO_ERRORS);
    await expect.poll(items, { timeout: 30_000 }).toEqual(['门→们', '以→已']);
  });

  test('360 px phone: no horizontal scroll, touch targets >= 44 px, suggestions open; screenshots', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    await page.getByTestId('input').fill(TWO_ERRORS);
    await expect.poll(items, { timeout: 30_000 }).toEqual(['门→们', '以→已']);
    await page.getByTestId('check-item').first().click();
    await page.getByTestId('check-suggestions').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    const small = await smallTouchTargets(page, 'button:visible');
    expect(small).toEqual([]);
    await page.screenshot({ path: artifactPath('check-mobile-360x740.png') });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: artifactPath('check-desktop-1280.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: artifactPath('check-desktop-1280-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  test('the mode is remembered on the next visit; 填空 hides the underlines and predicts again', async () => {
    await context.setOffline(false);
    await page.reload();
    await page.getByTestId('status').filter({ hasText: '模型已就绪' }).waitFor({ timeout: 180_000 });
    expect(await page.getByTestId('mode-check').getAttribute('aria-pressed')).toBe('true');
    await page.getByTestId('input').fill(TWO_ERRORS);
    await expect.poll(underlined, { timeout: 30_000 }).toEqual(['门', '以']);
    await page.getByTestId('mode-fill').click();
    expect(await underlined()).toEqual([]);
    expect(await page.getByTestId('check-panel').isVisible()).toBe(false);
    await page.getByTestId('input').fill('今天天气真[MASK]啊');
    await page.getByTestId('predict').click();
    await expect.poll(() => page.getByTestId('mask-result').count(), { timeout: 30_000 }).toBe(1);
  });
});
