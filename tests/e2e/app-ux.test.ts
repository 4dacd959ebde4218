// The app's rough edges (issues 17 and 18), in headless Chromium with the tiny test model:
// never an empty candidate list (filtered-out candidates greyed under a one-line note), adjacent
// masks filled with the best whole word, 选项 visibly expandable and summarised, the hint's
// wording, no keyboard hint on touch screens, Chinese-only error messages with the technical
// detail folded, 【MASK】 as a mask, results marked stale the moment the input changes (and
// "用作输入" never overwriting the edit), a new prediction aborting the running heatmap, the
// idiom dictionary fetched only when first needed, a 200 000-character paste full of
// invisible characters staying responsive, and the 平仄 view (each character's class as an
// independent parse of Unihan gives it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { unihanStandardReadings } from '../harness/unihan-reference.mjs';
import { buildApp, launchBrowser, makeTinyModel, missingPrerequisite, serveApp, type ServedApp } from './harness.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

describe.skipIf(missing !== null)('app: rough edges', () => {
  let workDir: string;
  let app: ServedApp;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'tiankong-app-ux-'));
    const model = await makeTinyModel(workDir);
    await buildApp(model, path.join(workDir, 'app'));
    app = await serveApp(path.join(workDir, 'app'));
    context = await launchBrowser();
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${app.origin}/`);
    await page.getByTestId('status').filter({ hasText: '模型已就绪' }).waitFor({ timeout: 120_000 });
  });

  afterAll(async () => {
    await context?.close();
    await app?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  async function predict(text: string): Promise<void> {
    await page.getByTestId('input').fill(text);
    await page.getByTestId('predict').click();
    await expect.poll(() => page.getByTestId('stale-note').isHidden()).toBe(true);
    await expect.poll(() => page.getByTestId('predict').getAttribute('aria-busy')).toBeNull();
  }

  test('the model download started at once, before the service worker (whose precache then costs 304s)', async () => {
    const firstModel = app.log.findIndex((r) => r.startsWith('GET /models/default/model.onnx'));
    const firstWorker = app.log.findIndex((r) => r.startsWith('GET /sw.js'));
    expect(firstModel).toBeGreaterThanOrEqual(0);
    expect(firstWorker === -1 || firstModel < firstWorker, app.log.join('\n')).toBe(true);
  });

  test('no idiom dictionary until a filled blank sits inside Chinese text; then once', async () => {
    const idiomRequests = () => app.log.filter((r) => r.startsWith('GET /idioms.json')).length;
    expect(idiomRequests()).toBe(0);
    await predict('abc [MASK] xyz');
    await expect.poll(() => page.getByTestId('mask-result').count()).toBe(1);
    expect(idiomRequests()).toBe(0);
    await predict('他做事总是掩耳盗[MASK]。');
    await expect.poll(idiomRequests).toBe(1);
    await predict('一石二[MASK]');
    await page.waitForTimeout(300);
    expect(idiomRequests()).toBe(1);
  });

  test('filters that hide every candidate: the top candidates greyed under a note that reads as one line, never an empty list', async () => {
    // The tiny random model's probabilities are all far below the default 1% threshold.
    expect(await page.locator('#opt-threshold').inputValue()).toBe('0.01');
    for (const width of [1280, 360]) {
      await page.setViewportSize({ width, height: 900 });
      await predict('春眠不觉晓，处处闻啼[MASK]。');
      const card = page.getByTestId('mask-result').first();
      await expect.poll(() => card.getByTestId('candidate').count()).toBe(5);
      expect(await card.locator('.candidates.unfiltered').count()).toBe(1);
      expect(
        Number(
          await card
            .getByTestId('candidate')
            .first()
            .evaluate((n) => getComputedStyle(n).opacity),
        ),
      ).toBeLessThan(1);
      const note = card.getByTestId('candidates-note');
      expect(await note.textContent()).toMatch(/没有候选符合当前的筛选条件/);
      const box = (await note.boundingBox())!;
      const cardBox = (await card.boundingBox())!;
      // One character per line was the bug: the note spans the card and wraps like text.
      expect(box.width, `${width}px`).toBeGreaterThan(cardBox.width * 0.8);
      expect(box.height, `${width}px`).toBeLessThan(width === 360 ? 120 : 60);
      // The filled sentence uses the greyed best candidate rather than leaving [MASK] in it.
      const token = await card.getByTestId('candidate').first().getAttribute('data-token');
      expect(await page.getByTestId('filled').textContent()).toBe(`春眠不觉晓，处处闻啼${token}。`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test('adjacent masks: the sentence is filled with the best whole word, not with independent per-mask picks', async () => {
    await page.locator('details.options').evaluate((d: HTMLDetailsElement) => (d.open = true));
    await page.locator('#opt-threshold').selectOption('0');
    const text = '我们明天去[MASK][MASK]玩。';
    await predict(text);
    const words = page.getByTestId('word-candidate');
    await expect.poll(() => words.count()).toBeGreaterThan(1);
    const best = (await words.first().getAttribute('data-text'))!;
    expect(await page.getByTestId('filled').textContent()).toBe(text.replace('[MASK][MASK]', best));
    expect(await words.first().getAttribute('aria-pressed')).toBe('true');
    // Each mask card shows the word's character as picked where it is among its candidates.
    for (const [i, char] of [...best].entries()) {
      const tokens = await page
        .getByTestId('mask-result')
        .nth(i)
        .getByTestId('candidate')
        .evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.token));
      const pressed = await page
        .getByTestId('mask-result')
        .nth(i)
        .locator('[data-testid=candidate][aria-pressed=true]')
        .count();
      expect(pressed).toBe(tokens.includes(char) ? 1 : 0);
    }
    // Picking another word, then a per-mask candidate, fills exactly those.
    const second = (await words.nth(1).getAttribute('data-text'))!;
    await words.nth(1).click();
    expect(await page.getByTestId('filled').textContent()).toBe(text.replace('[MASK][MASK]', second));
    const other = page.getByTestId('mask-result').nth(0).getByTestId('candidate').nth(2);
    const token = (await other.getAttribute('data-token'))!;
    await other.click();
    expect(await page.getByTestId('filled').textContent()).toBe(text.replace('[MASK][MASK]', token + [...second][1]));
    expect(await words.nth(1).getAttribute('aria-pressed')).toBe('false');
  });

  test('选项 looks expandable (a chevron that turns) and says what it holds while closed', async () => {
    await page.locator('details.options').evaluate((d: HTMLDetailsElement) => (d.open = false));
    const chevron = page.locator('.options-chevron');
    expect(await chevron.isVisible()).toBe(true);
    const closed = await chevron.evaluate((n) => getComputedStyle(n).transform);
    expect(await page.getByTestId('options-summary').textContent()).toBe('候选 5 个 · 最低概率 不限 · 只要汉字');
    expect(
      Number(await page.getByTestId('options-toggle').evaluate((n) => parseFloat(getComputedStyle(n).borderTopWidth))),
    ).toBeGreaterThan(0);
    await page.getByTestId('options-toggle').click();
    expect(await page.locator('details.options').evaluate((d: HTMLDetailsElement) => d.open)).toBe(true);
    await expect.poll(() => chevron.evaluate((n) => getComputedStyle(n).transform)).not.toBe(closed);
    await page.locator('#opt-topk').selectOption('3');
    expect(await page.getByTestId('options-summary').textContent()).toBe('候选 3 个 · 最低概率 不限 · 只要汉字');
    await page.locator('#opt-topk').selectOption('5');
  });

  test('the hint says several masks are welcome (not a limit); its keyboard part shows on desktops only', async () => {
    const hint = (await page.locator('#input-hint').textContent()) ?? '';
    expect(hint).not.toMatch(/最多/);
    expect(hint).toMatch(/好几处 \[MASK\]/);
    expect(await page.getByTestId('kbd-hint').isVisible()).toBe(true);
    const phone = await context.newPage();
    const cdp = await context.newCDPSession(phone);
    await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 5 });
    await cdp.send('Emulation.setEmitTouchEventsForMouse', { enabled: true, configuration: 'mobile' });
    await phone.goto(`${app.origin}/`);
    expect(
      await phone.evaluate(
        () => matchMedia('(pointer: coarse)').matches || matchMedia('(any-pointer: coarse)').matches,
      ),
    ).toBe(true);
    expect(await phone.getByTestId('kbd-hint').isVisible()).toBe(false);
    expect(await phone.locator('#input-hint').isVisible()).toBe(true); // the rest of the hint stays
    await phone.close();
  });

  test('errors speak Chinese; the technical (English) detail is folded away', async () => {
    await predict('没有掩码的句子');
    await expect.poll(() => page.locator('#error').isVisible()).toBe(true);
    const visible = await page.locator('#error').innerText();
    expect(visible).toMatch(/句子里没有 \[MASK\]/);
    expect(visible.replace(/\[MASK\]/g, '')).not.toMatch(/[A-Za-z]{2,}/);
    expect(await page.locator('#error-more').evaluate((d: HTMLDetailsElement) => d.open)).toBe(false);
    expect(await page.locator('#error-detail').textContent()).toMatch(/mask/i);
    await page.locator('#error-more summary').click();
    expect(await page.locator('#error-detail').isVisible()).toBe(true);
  });

  test('平仄 view: each character’s class under it, polyphones outlined, blanks as □, following the edits', async () => {
    const standard = unihanStandardReadings();
    // From the docs: the class of the likeliest reading with a tone (1-2 平, 3-4 仄).
    const classOf = (char: string) => {
      const classes = (standard.get(char) ?? []).map((r) => ({ 1: '平', 2: '平', 3: '仄', 4: '仄' })[r.slice(-1)]);
      return { tone: classes.find(Boolean) ?? '轻声', polyphone: classes.includes('平') && classes.includes('仄') };
    };
    const cells = () =>
      page.locator('[data-testid="tone-line"] .tone-char').evaluateAll((nodes) =>
        nodes.map((n) => ({
          char: n.querySelector('.tone-glyph')!.textContent,
          tone: (n as HTMLElement).dataset.tone,
          polyphone: (n as HTMLElement).dataset.polyphone === 'true',
        })),
      );
    const input = page.getByTestId('input');
    await input.fill('春风又绿江南[MASK:an4]，\n明月何时照我还。');
    expect(await page.getByTestId('tone-view').isHidden()).toBe(true);
    await page.getByTestId('tone-toggle').click();
    expect(await page.getByTestId('tone-toggle').getAttribute('aria-pressed')).toBe('true');
    const poem = [...'春风又绿江南明月何时照我还'];
    await expect.poll(cells).toEqual(poem.map((char) => ({ char, ...classOf(char) })));
    expect(await page.getByTestId('tone-line').textContent()).toContain('□，');
    expect(await page.locator('[data-testid="tone-line"] .tone-break').count()).toBe(1);
    // 看 kàn / kān is outlined, its readings in the tooltip.
    await input.fill('看');
    await expect.poll(cells).toEqual([{ char: '看', tone: '仄', polyphone: true }]);
    expect(await page.locator('.tone-char.polyphone').getAttribute('title')).toContain('kàn');
    // A long paste: only the head is read, and the note says so.
    await input.fill('春'.repeat(5000));
    await expect.poll(() => page.locator('[data-testid="tone-line"] .tone-char').count()).toBe(600);
    expect(await page.locator('#tone-note').textContent()).toContain('只显示前 600 字');
    await page.getByTestId('tone-toggle').click();
    expect(await page.getByTestId('tone-view').isHidden()).toBe(true);
    await input.fill('');
  });

  test('【MASK】, as a Chinese keyboard types it, is a mask', async () => {
    await predict('床前明月光，疑是地【MASK】霜。');
    expect(await page.locator('#editor-backdrop mark.mark-mask').textContent()).toBe('【MASK】');
    await expect.poll(() => page.getByTestId('mask-result').count()).toBe(1);
  });

  test('results turn stale the moment the input changes; "用作输入" cannot overwrite the edit', async () => {
    await predict('春眠不觉晓，处处闻啼[MASK]。');
    expect(await page.getByTestId('stale-note').isHidden()).toBe(true);
    const input = page.getByTestId('input');
    await input.press('End');
    await input.type('好');
    expect(await page.getByTestId('stale-note').isVisible()).toBe(true);
    expect(await page.locator('#results').evaluate((n) => n.classList.contains('stale'))).toBe(true);
    expect(await page.locator('#use-filled').isDisabled()).toBe(true);
    await page.locator('#use-filled').evaluate((b: HTMLButtonElement) => b.click());
    expect(await input.inputValue()).toBe('春眠不觉晓，处处闻啼[MASK]。好');
    // Undoing the edit makes them current again; a new prediction too.
    await input.press('Backspace');
    expect(await page.getByTestId('stale-note').isHidden()).toBe(true);
    expect(await page.locator('#use-filled').isDisabled()).toBe(false);
    await input.type('好');
    await page.getByTestId('predict').click();
    await expect.poll(() => page.getByTestId('stale-note').isHidden()).toBe(true);
    await page.locator('#use-filled').click();
    expect(await input.inputValue()).not.toContain('[MASK]');
  });

  test('a new prediction aborts the heatmap still being computed; the new answer does not wait for it', async () => {
    const long = `${'春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。'.repeat(5)}[MASK]`; // within the tiny model's 128 tokens
    const heatmapNote = page.locator('[data-testid=heatmap] .heatmap-note');
    // How long one heatmap takes here (one model run per token of the text).
    await predict(long);
    let started = await page.evaluate(() => performance.now());
    await page.getByTestId('mask-result').first().getByTestId('candidate').nth(1).click();
    await expect
      .poll(() => page.getByTestId('heatmap-token').count(), { timeout: 60_000, interval: 20 })
      .toBeGreaterThan(100);
    const explainMs = (await page.evaluate(() => performance.now())) - started;
    // Again (another candidate, so nothing is cached), and a new prediction right away.
    started = await page.evaluate(() => performance.now());
    await page.getByTestId('mask-result').first().getByTestId('candidate').nth(2).click();
    expect(await heatmapNote.textContent()).toMatch(/正在逐字分析/);
    await page.getByTestId('input').fill('今天天气真[MASK]啊');
    await page.getByTestId('predict').click();
    await expect
      .poll(() => page.getByTestId('filled').textContent(), { timeout: 60_000, interval: 20 })
      .toMatch(/^今天天气真.啊$/);
    const answerMs = (await page.evaluate(() => performance.now())) - started;
    console.log(`heatmap: ${Math.round(explainMs)} ms; a new answer while one ran: ${Math.round(answerMs)} ms`);
    expect(await page.locator('[data-testid=heatmap]').isHidden()).toBe(true);
    // The heatmap never completes for the old text afterwards, and no failure is shown for it.
    await page.waitForTimeout(300);
    expect(await page.locator('[data-testid=heatmap]').isHidden()).toBe(true);
    // Waiting for the heatmap would take at least the rest of a whole heatmap plus the prediction;
    // not waiting takes one prediction (a CPU hog beside the suite slowed both: 386 vs 501 ms seen).
    expect(answerMs).toBeLessThan(Math.max(explainMs, 150));
  });

  test('a 200 000-character paste full of invisible characters: typing stays responsive', async () => {
    const input = page.getByTestId('input');
    /** Pastes `text`, types five characters in its middle; the median ms from input to the next frame. */
    const keystrokes = async (text: string): Promise<number> => {
      await input.evaluate((el: HTMLTextAreaElement, value: string) => {
        el.value = value;
        el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertFromPaste' }));
        el.setSelectionRange(100_000, 100_000);
        el.focus();
        const times: number[] = [];
        (window as unknown as { __keystrokes: number[] }).__keystrokes = times;
        el.addEventListener(
          'input',
          () => {
            const start = performance.now();
            requestAnimationFrame(() => setTimeout(() => times.push(performance.now() - start), 0));
          },
          { capture: true },
        );
      }, text);
      for (const key of '填空测试字') {
        await page.keyboard.type(key);
        await page.waitForTimeout(50);
      }
      await expect
        .poll(() => page.evaluate(() => (window as unknown as { __keystrokes: number[] }).__keystrokes.length))
        .toBeGreaterThanOrEqual(5);
      const times = await page.evaluate(() => (window as unknown as { __keystrokes: number[] }).__keystrokes);
      return [...times.slice(-5)].sort((a, b) => a - b)[2]!;
    };
    // Side by side in one page: the browser's own cost of a 200 000-character textarea, then the
    // same length full of invisible characters (before the fix: 1.4–1.6 s a keystroke, ~10× plain).
    const plain = await keystrokes(`${'春眠不觉晓，处处闻啼鸟。'.repeat(200_000 / 12)}[MASK]`);
    const invisible = await keystrokes(`${'春眠不觉晓\u200b处处闻啼鸟\u3000'.repeat(200_000 / 12)}[MASK]`);
    expect(await page.getByTestId('warnings').textContent()).toMatch(/发现 3333\d 个不可见或特殊字符.*不再逐个标出/);
    console.log(
      `keystrokes in a 200 000-character text: plain ${Math.round(plain)} ms, invisible ${Math.round(invisible)} ms`,
    );
    expect(invisible).toBeLessThan(3 * plain + 100);
    expect((await input.inputValue()).slice(100_000, 100_005)).toBe('填空测试字');
    // Tens of thousands of highlight boxes would be laid out again on every keystroke: masks only.
    expect(await page.locator('#editor-backdrop mark.mark-suspicious').count()).toBe(0);
    expect(await page.locator('#editor-backdrop mark.mark-mask').count()).toBe(1);
    // A few hundred are all highlighted, incrementally as they are typed.
    await input.fill(`${'春眠\u200b'.repeat(500)}[MASK]`);
    expect(await page.locator('#editor-backdrop mark.mark-suspicious').count()).toBe(500);
    await input.press('End');
    await page.keyboard.type('a\u200bb');
    expect(await page.locator('#editor-backdrop mark.mark-suspicious').count()).toBe(501);
    expect(await page.locator('#editor-backdrop').textContent()).toBe(`${await input.inputValue()}\u200b`);
  });
});
