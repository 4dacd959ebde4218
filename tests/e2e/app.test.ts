// The web app in headless Chromium, built with the tiny test model and served by the app's own
// server: first visit (service worker precache, cross-origin isolation, threads), predicting
// 1 and 3 masks, click-to-fill, copy, messages for bad input, second visit from Cache Storage,
// offline reload, no request leaving the origin, no CSP violation, and the 360 px layout
// (screenshots saved to tests/e2e/artifacts/).
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  artifactPath,
  buildApp,
  launchBrowser,
  makeTinyModel,
  missingPrerequisite,
  serveApp,
  type ServedApp,
  smallTouchTargets,
} from './harness.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const ONE_MASK = '春眠不觉晓，处处闻啼[MASK]。';
const THREE_MASKS = '白日依山尽，黄[MASK]入[MASK]流。欲穷千里目，更上一层[MASK]。';
const READY = /模型已就绪/;
/** The runtime package's Node-only files: copied but never precached or loaded by the page. */
const NOT_PRECACHED = /^tiankong\/(index|cli|node|tokenize)\.js$/;

/** sha256 of every file under `dir`, by relative path. */
function fileHashes(dir: string): Map<string, string> {
  const hashes = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    hashes.set(
      path.relative(dir, full).split(path.sep).join('/'),
      createHash('sha256').update(readFileSync(full)).digest('hex'),
    );
  }
  return hashes;
}

// Records, inside the page, every text the status and progress lines show and every CSP violation.
const RECORDER = `
  window.__seen = { status: [], progress: [], csp: [] };
  document.addEventListener('securitypolicyviolation', (e) => window.__seen.csp.push(e.violatedDirective + ' ' + e.blockedURI));
  new MutationObserver(() => {
    const s = document.querySelector('[data-testid=status]')?.textContent;
    const p = document.getElementById('progress-text')?.textContent;
    if (s && window.__seen.status.at(-1) !== s) window.__seen.status.push(s);
    if (p && window.__seen.progress.at(-1) !== p) window.__seen.progress.push(p);
  }).observe(document, { subtree: true, childList: true, characterData: true });
`;

interface Seen {
  status: string[];
  progress: string[];
  csp: string[];
}

describe.skipIf(missing !== null)('web app in headless Chromium', () => {
  let workDir: string;
  let model: string;
  let out: string;
  let app: ServedApp;
  let headerless: ServedApp | undefined;
  let broken: ServedApp | undefined;
  let context: BrowserContext;
  let page: Page;
  const requests: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'tiankong-app-e2e-'));
    model = await makeTinyModel(workDir);
    out = path.join(workDir, 'app');
    await buildApp(model, out);
    app = await serveApp(out);
    context = await launchBrowser();
    await context.addInitScript(RECORDER);
    context.on('request', (request) => requests.push(request.url()));
    context.on('console', (message) => {
      // The broken-model test's 404s are expected there.
      if (message.type() === 'error' && !(broken && message.location().url.startsWith(broken.origin)))
        consoleErrors.push(message.text());
    });
    page = context.pages()[0] ?? (await context.newPage());
  });

  afterAll(async () => {
    await context?.close();
    await app?.close();
    await headerless?.close();
    await broken?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  const status = () => page.getByTestId('status');
  const seen = () => page.evaluate(() => (window as unknown as { __seen: Seen }).__seen);

  /** Shows every candidate: the tiny random model's probabilities are all far below the default 1% threshold. */
  async function noThreshold(): Promise<void> {
    await page.locator('details.options').evaluate((d: HTMLDetailsElement) => (d.open = true));
    await page.locator('#opt-threshold').selectOption('0');
  }

  async function predict(text: string): Promise<void> {
    await page.getByTestId('input').fill(text);
    await page.getByTestId('predict').click();
  }

  async function candidates(maskIndex: number): Promise<string[]> {
    return page
      .getByTestId('mask-result')
      .nth(maskIndex)
      .getByTestId('candidate')
      .evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.token ?? ''));
  }

  test('first visit: the model downloads at once with progress, then ready, cross-origin isolated with threads; the offline copy follows', async () => {
    await page.goto(`${app.origin}/`);
    await expect.poll(() => status().textContent(), { timeout: 120_000 }).toMatch(READY);
    const { progress } = await seen();
    // A real byte count against the total: "已下载 1.2 MB / 18.3 MB (6%)".
    expect(
      progress.some((p) => /已下载 [\d.]+ [KM]?B \/ [\d.]+ [KM]?B/.test(p)),
      progress.join(' | '),
    ).toBe(true);
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
    // The service worker is registered after the model is ready; its precache mostly revalidates.
    await expect
      .poll(() => page.evaluate(() => navigator.serviceWorker.controller !== null), { timeout: 60_000 })
      .toBe(true);
    await expect.poll(() => status().textContent()).toMatch(/已可离线使用/);
    const engine = (await page.getByTestId('engine').textContent()) ?? '';
    const threads = Number(/(\d+) 线程/.exec(engine)?.[1] ?? 1);
    expect(threads, engine).toBeGreaterThanOrEqual(2);
  });

  test('predicts one mask: one result with candidates and probabilities, timings and memory shown', async () => {
    await noThreshold();
    await predict(ONE_MASK);
    await expect.poll(() => page.getByTestId('mask-result').count()).toBe(1);
    expect(await candidates(0)).toHaveLength(5);
    const scores = await page.locator('.candidate-score').allTextContents();
    expect(scores.every((s) => /^(<0\.1|\d+\.\d)%$/.test(s))).toBe(true);
    expect(await page.getByTestId('timings').textContent()).toMatch(/推理 .* ms/);
    await expect.poll(() => page.getByTestId('memory').textContent()).toMatch(/内存 [\d.]+ [KMG]?B/);
  });

  test('predicts three masks, clicking a candidate fills it into the sentence, copy copies it', async () => {
    await predict(THREE_MASKS);
    await expect.poll(() => page.getByTestId('mask-result').count()).toBe(3);
    const lists = [await candidates(0), await candidates(1), await candidates(2)];
    for (const list of lists) expect(list.length).toBeGreaterThan(1);
    const filledWith = (a: string, b: string, c: string) => `白日依山尽，黄${a}入${b}流。欲穷千里目，更上一层${c}。`;
    expect(await page.getByTestId('filled').textContent()).toBe(
      filledWith(lists[0]![0]!, lists[1]![0]!, lists[2]![0]!),
    );

    await page.getByTestId('mask-result').nth(1).getByTestId('candidate').nth(1).click();
    const expected = filledWith(lists[0]![0]!, lists[1]![1]!, lists[2]![0]!);
    expect(await page.getByTestId('filled').textContent()).toBe(expected);
    expect(
      await page.getByTestId('mask-result').nth(1).getByTestId('candidate').nth(1).getAttribute('aria-pressed'),
    ).toBe('true');

    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.origin });
    await page.getByTestId('copy').click();
    await expect.poll(() => page.locator('#copy-feedback').textContent()).toMatch(/已复制/);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(expected);
  });

  test('Ctrl+Enter predicts; the insert button puts [MASK] at the cursor', async () => {
    const input = page.getByTestId('input');
    await input.fill('今天天气真啊');
    await input.evaluate((el: HTMLTextAreaElement) => el.setSelectionRange(5, 5));
    await page.getByTestId('insert-mask').click();
    expect(await input.inputValue()).toBe('今天天气真[MASK]啊');
    expect(await page.locator('#editor-backdrop mark.mark-mask').textContent()).toBe('[MASK]');
    await input.press('Control+Enter');
    await expect.poll(() => page.getByTestId('filled').textContent()).toMatch(/^今天天气真.啊$/);
  });

  test('bad input shows a specific message: empty, no mask; suspicious characters are flagged', async () => {
    await predict('');
    await expect.poll(() => page.locator('#error-title').textContent()).toBe('请先输入一句话');
    await predict('没有掩码的句子');
    await expect.poll(() => page.locator('#error-title').textContent()).toBe('句子里没有 [MASK]');
    expect(await page.locator('#error-detail').textContent()).toMatch(/mask/i);
    await page.getByTestId('input').fill('春眠\u3000不觉\u200b晓[mask]');
    const warnings = (await page.getByTestId('warnings').textContent()) ?? '';
    expect(warnings).toContain('全角空格 U+3000');
    expect(warnings).toContain('零宽空格 U+200B');
    expect(await page.locator('#editor-backdrop mark.mark-mask').textContent()).toBe('[mask]');
    await page.getByRole('button', { name: '一键清除' }).click();
    expect(await page.getByTestId('input').inputValue()).toBe('春眠 不觉晓[mask]');
    expect(await page.getByTestId('warnings').isHidden()).toBe(true);
  });

  test('second visit starts from Cache Storage: nothing but the service worker check reaches the server', async () => {
    app.log.length = 0;
    await page.reload();
    await expect.poll(() => status().textContent(), { timeout: 60_000 }).toMatch(READY);
    expect(app.log.filter((r) => !r.startsWith('GET /sw.js'))).toEqual([]);
    const { status: statuses } = await seen();
    expect(
      statuses.some((s) => s.includes('本地缓存')),
      statuses.join(' | '),
    ).toBe(true);
  });

  test('offline reload still loads and predicts', async () => {
    app.log.length = 0;
    await context.setOffline(true);
    try {
      await page.reload();
      await expect.poll(() => status().textContent(), { timeout: 60_000 }).toMatch(READY);
      expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
      await noThreshold();
      await predict(ONE_MASK);
      await expect.poll(() => page.getByTestId('mask-result').count()).toBe(1);
      expect((await candidates(0)).length).toBe(5);
    } finally {
      await context.setOffline(false);
    }
    // The browser's update check of sw.js may bypass the offline emulation; nothing else may reach the server.
    expect(app.log.filter((r) => !r.startsWith('GET /sw.js'))).toEqual([]);
  });

  test('an update waits for the user, then switches cleanly: only changed files download, old caches go', async () => {
    // Version 2: the same app with a renamed model (model.json changes, the model bytes do not).
    const modelV2 = path.join(workDir, 'model-v2');
    cpSync(model, modelV2, { recursive: true });
    const manifest = JSON.parse(readFileSync(path.join(modelV2, 'model.json'), 'utf8'));
    writeFileSync(path.join(modelV2, 'model.json'), JSON.stringify({ ...manifest, name: 'tiny-random-v2' }));
    const before = fileHashes(out);
    await buildApp(modelV2, out);
    const after = fileHashes(out);
    // What changed on disk (other helpers may rebuild the runtime meanwhile: compare, do not assume).
    const changed = [...after]
      .filter(
        ([file, hash]) =>
          before.get(file) !== hash && file !== 'sw.js' && !NOT_PRECACHED.test(file) && !/\.(br|gz)$/.test(file),
      ) // precompressed variants are sent for their plain file's URL
      .map(([file]) => `GET /${file}`)
      .sort();
    expect(changed).toContain('GET /models/default/model.json');
    app.log.length = 0;
    await page.reload();
    await expect.poll(() => page.locator('#update-banner').isVisible(), { timeout: 60_000 }).toBe(true);
    expect(await page.getByTestId('engine').textContent()).toMatch(/tiny-random$/); // still version 1 until the user says so
    await page.locator('#update-reload').click();
    await expect.poll(() => page.getByTestId('engine').textContent(), { timeout: 60_000 }).toMatch(/tiny-random-v2$/);
    expect(app.log.filter((r) => r !== 'GET /sw.js').sort()).toEqual(changed);
    const cacheNames = await page.evaluate(() => caches.keys());
    expect(cacheNames.filter((n) => n.startsWith('tiankong-app-'))).toHaveLength(1);
  });

  test('a static host that sends no COOP/COEP: the service worker adds them after one reload, so threads work', async () => {
    headerless = await serveApp(out, { headers: {} });
    const second = await context.newPage();
    let navigations = 0;
    second.on('framenavigated', (frame) => {
      if (frame === second.mainFrame()) navigations++;
    });
    await second.goto(`${headerless.origin}/`);
    await expect.poll(() => second.getByTestId('status').textContent(), { timeout: 120_000 }).toMatch(READY);
    expect(await second.evaluate(() => crossOriginIsolated)).toBe(true);
    expect(navigations).toBe(2);
    expect(await second.getByTestId('engine').textContent()).toMatch(/[2-9] 线程/);
    await second.close();
  });

  test('a missing model file: the page says what failed and offers a retry; nothing bad is cached', async () => {
    const copy = path.join(workDir, 'broken');
    cpSync(out, copy, { recursive: true });
    rmSync(path.join(copy, 'models/default/model.onnx'));
    broken = await serveApp(copy);
    const third = await context.newPage();
    await third.goto(`${broken.origin}/`);
    await expect.poll(() => third.locator('#error-title').textContent(), { timeout: 120_000 }).toBe('下载失败');
    expect(await third.getByTestId('status').textContent()).toBe('模型未能加载');
    expect(await third.locator('#error-detail').textContent()).toMatch(/HTTP 404 .*model\.onnx/);
    expect(await third.locator('#error-retry').isVisible()).toBe(true);
    expect(await third.getByTestId('predict').isDisabled()).toBe(true);
    const cachedModelFiles = await third.evaluate(async () =>
      (await (await caches.open('tiankong-models-v1')).keys())
        .map((r) => r.url)
        .filter((u) => u.includes('model.onnx')),
    );
    expect(cachedModelFiles).toEqual([]);
    await third.close();
  });

  test('360 px phone layout: no horizontal scroll, touch targets >= 44 px; screenshots', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    await noThreshold();
    await predict(THREE_MASKS);
    await expect.poll(() => page.getByTestId('mask-result').count()).toBe(3);
    await page.getByTestId('input').fill(`${THREE_MASKS}\u3000\u200b`); // warning chips count as touch targets too
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    const small = await smallTouchTargets(page, 'button:visible, select:visible, summary:visible');
    expect(small).toEqual([]);
    await page.screenshot({ path: artifactPath('mobile-360x740.png') });
    await page.screenshot({ path: artifactPath('mobile-360-full.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: artifactPath('desktop-1280.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: artifactPath('desktop-1280-dark.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  test('every request stayed on the origin; no CSP violation or console error', async () => {
    expect(requests.length).toBeGreaterThan(0);
    const origins = [app.origin, headerless?.origin, broken?.origin];
    expect(requests.filter((url) => !origins.includes(new URL(url).origin))).toEqual([]);
    expect((await seen()).csp).toEqual([]);
    expect(consoleErrors.filter((e) => !/ERR_INTERNET_DISCONNECTED/.test(e))).toEqual([]);
  });
});
