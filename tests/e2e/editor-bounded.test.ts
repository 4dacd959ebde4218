// The editor's cost per keystroke stays bounded however much is pasted and whatever invisible
// characters it holds (issue 28, item 6), in headless Chromium with the app built with the tiny
// test model. Nothing here is timed: the work is counted in what changes in the backdrop (the
// highlight layer behind the textarea) — the characters and nodes put into it per keystroke, and
// its highlights per run of invisible characters — and checked against what it must still show:
// the text laid out exactly as a single block would (so as the textarea does), every mask and
// invisible character highlighted, the warnings, masks-only past 2000 invisible characters, and
// the textarea's height. The timings are bench/editor-paste.mjs's job.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { findMasks, findSuspicious } from '../../web/app/src/text-marks.js';
import { buildApp, launchBrowser, makeTinyModel, missingPrerequisite, serveApp, type ServedApp } from './harness.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

/**
 * What one keystroke may put into the backdrop, however long the text (backdrop.ts): the pieces
 * around the edit (512 characters at most each) and, when a block outgrows 4096 characters or
 * two blocks join, about a block's worth moved; a text node per run, a mark (with its text node)
 * per highlight. The editor before these limits put the whole text around a keystroke back
 * (199 995 characters of 200 000).
 */
const MAX_CHARS_PER_KEYSTROKE = 6144;
const MAX_NODES_PER_KEYSTROKE = 1536;

const POEM = '春眠不觉晓处处闻啼鸟夜来风雨声花落知多少床前明月光疑是地上霜举头望明月低头思故乡';
/** `length` units of Chinese; every `every`-th character an invisible one (U+200B and U+3000 in turn); a newline every `line`. */
function makeText(length: number, { every = 0, line = 0 } = {}): string {
  let out = '';
  for (let i = 0, invisible = 0; out.length < length - 6; i++) {
    if (line > 0 && i % line === line - 1) out += '\n';
    else if (every > 0 && i % every === every - 1) out += invisible++ % 2 === 0 ? '\u200b' : '\u3000';
    else out += POEM[i % POEM.length];
  }
  return `${out}[MASK]`;
}

/**
 * In the page: what a change puts into the backdrop — the nodes added (with what they hold, moved
 * nodes too: the browser lays them out again) and their characters, each node counted once.
 */
const RECORDER = `
  window.__added = new Set();
  const collect = (records) => {
    for (const record of records) {
      if (record.type === 'characterData') window.__added.add(record.target);
      for (const node of record.addedNodes) window.__added.add(node);
    }
  };
  window.__observer = new MutationObserver(collect);
  window.__takeBackdrop = () => {
    collect(window.__observer.takeRecords());
    const root = document.getElementById('editor-backdrop');
    const seen = new Set();
    let chars = 0;
    for (const node of window.__added) {
      if (!root.contains(node)) continue;
      const walker = document.createTreeWalker(node, NodeFilter.SHOW_ALL);
      for (let n = walker.currentNode; n; n = walker.nextNode()) {
        if (seen.has(n)) continue;
        seen.add(n);
        if (n.nodeType === Node.TEXT_NODE) chars += n.data.length;
      }
    }
    window.__added = new Set();
    return { chars, nodes: seen.size };
  };
  addEventListener('DOMContentLoaded', () =>
    window.__observer.observe(document.getElementById('editor-backdrop'), { subtree: true, childList: true, characterData: true }));
`;

type Taken = { chars: number; nodes: number };
declare global {
  interface Window {
    __takeBackdrop(): Taken;
  }
}

describe.skipIf(missing !== null)('editor: bounded work per keystroke', () => {
  let workDir: string;
  let app: ServedApp;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'tiankong-editor-'));
    const model = await makeTinyModel(workDir);
    await buildApp(model, path.join(workDir, 'app'));
    app = await serveApp(path.join(workDir, 'app'));
    context = await launchBrowser();
    await context.addInitScript(RECORDER);
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${app.origin}/`);
    await page.getByTestId('status').filter({ hasText: '模型已就绪' }).waitFor({ timeout: 120_000 });
  });

  afterAll(async () => {
    await context?.close();
    await app?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  const input = () => page.getByTestId('input');

  /** Replaces the text as a paste does (one input event). */
  async function paste(text: string): Promise<void> {
    await input().evaluate((el: HTMLTextAreaElement, value) => {
      el.focus();
      el.select();
      el.setRangeText(value, 0, el.value.length, 'end');
      el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertFromPaste' }));
    }, text);
  }

  /** Two frames: the editor fits its height once a frame. */
  const frames = () =>
    page.evaluate(
      () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 0)))),
    );

  /** The text ranges the backdrop highlights, by kind (merged where adjacent; a mask may hold highlighted characters). */
  function highlighted(): Promise<{ mask: Array<[number, number]>; suspicious: Array<[number, number]> }> {
    return page.evaluate(() => {
      const root = document.getElementById('editor-backdrop')!;
      const out = { mask: [] as Array<[number, number]>, suspicious: [] as Array<[number, number]> };
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      let offset = 0;
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const length = (node as Text).data.length;
        for (const kind of ['mask', 'suspicious'] as const) {
          if (!node.parentElement?.closest(`mark.mark-${kind}`)) continue;
          const ranges = out[kind];
          const last = ranges[ranges.length - 1];
          if (last && last[1] === offset) last[1] += length;
          else ranges.push([offset, offset + length]);
        }
        offset += length;
      }
      return out;
    });
  }

  /** The ranges `marks` cover, adjacent ones merged. */
  function merged(marks: Array<{ start: number; end: number }>): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (const { start, end } of marks) {
      const last = out[out.length - 1];
      if (last && last[1] === start) last[1] = end;
      else out.push([start, end]);
    }
    return out;
  }

  /** The backdrop shows `text` with every mask (and, up to 2000, every suspicious character) highlighted. */
  async function expectShows(text: string, label: string): Promise<void> {
    expect(await page.locator('#editor-backdrop').textContent(), label).toBe(`${text}\u200b`);
    // Its blocks break only where the text does (after a newline), so they wrap as one block would.
    const blocks = await page.evaluate(() =>
      [...document.getElementById('editor-backdrop')!.firstElementChild!.children].map((b) => b.textContent!),
    );
    expect(
      blocks.slice(0, -1).every((b) => b.endsWith('\n')),
      label,
    ).toBe(true);
    const shown = await highlighted();
    expect(shown.mask, label).toEqual(merged(findMasks(text)));
    const suspicious = findSuspicious(text);
    expect(shown.suspicious, label).toEqual(suspicious.length <= 2000 ? merged(suspicious) : []);
  }

  /**
   * The geometry is the textarea's: every highlighted character sits where it would in the text
   * laid out as one block (the mirror the editor had before, which wraps as the textarea does),
   * the text is as tall, and the textarea is as tall as its text (its own scrollHeight) or its rows.
   */
  async function expectGeometry(label: string): Promise<void> {
    await frames();
    const problems = await page.evaluate(() => {
      const textarea = document.querySelector<HTMLTextAreaElement>('#input')!;
      const backdrop = document.getElementById('editor-backdrop')!;
      const text = textarea.value;
      const editor = backdrop.parentElement!;
      // The reference: the same classes, the text in one block, one text node (as in the textarea).
      const reference = document.createElement('div');
      reference.className = 'editor';
      reference.style.position = 'absolute';
      reference.style.visibility = 'hidden';
      reference.style.left = '0';
      reference.style.top = '0';
      reference.style.width = `${editor.getBoundingClientRect().width}px`;
      const referenceBackdrop = document.createElement('div');
      referenceBackdrop.className = 'editor-backdrop';
      const block = document.createElement('div');
      block.append(`${text}\u200b`);
      // Where to compare: every highlighted character, and every 97th.
      const marked = new Set<number>();
      for (let at = 0; at < text.length; at += 97) marked.add(at);
      for (const node of backdrop.querySelectorAll('mark')) {
        const range = document.createRange();
        range.selectNodeContents(backdrop);
        range.setEnd(node, 0);
        const start = range.toString().length;
        for (let i = 0; i < node.textContent!.length; i++) marked.add(start + i);
      }
      referenceBackdrop.append(block);
      reference.append(referenceBackdrop);
      document.body.append(reference);
      const rectOf = (root: HTMLElement, at: number) => {
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        let offset = 0;
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const length = (node as Text).data.length;
          if (at < offset + length) {
            const range = document.createRange();
            range.setStart(node, at - offset);
            range.setEnd(node, at - offset + 1);
            const r = range.getBoundingClientRect();
            const origin = root.getBoundingClientRect();
            return { x: r.left - origin.left, y: r.top - origin.top, width: r.width };
          }
          offset += length;
        }
        return null;
      };
      const problems: string[] = [];
      const lineHeight = parseFloat(getComputedStyle(backdrop).lineHeight);
      for (const at of marked) {
        const a = rectOf(backdrop, at);
        const b = rectOf(referenceBackdrop, at);
        if (a && b && Math.abs(a.x - b.x) <= 0.5 && Math.abs(a.y - b.y) <= 0.5) continue;
        // A zero-width character where a line wraps (a direction override before it, say) is at the
        // end of one line or the start of the next; both are where it is in the text.
        if (a && b && a.width === 0 && b.width === 0 && Math.abs(Math.abs(a.y - b.y) - lineHeight) <= 0.5) continue;
        problems.push(`character ${at}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      }
      const height = (backdrop.firstElementChild as HTMLElement).getBoundingClientRect().height;
      const referenceHeight = block.getBoundingClientRect().height;
      if (Math.abs(height - referenceHeight) > 0.5) problems.push(`text height ${height} vs ${referenceHeight}`);
      reference.remove();
      const shown = textarea.offsetHeight;
      textarea.style.height = 'auto';
      const natural = textarea.scrollHeight + 2;
      textarea.style.height = `${shown}px`;
      if (Math.abs(shown - natural) > 1) problems.push(`textarea ${shown}px high, its text needs ${natural}px`);
      if (textarea.scrollHeight > textarea.clientHeight) problems.push('the textarea scrolls');
      return problems.slice(0, 5);
    });
    expect(problems, label).toEqual([]);
  }

  test('a keystroke in a long text puts a bounded amount into the backdrop, with or without newlines and invisible characters', async () => {
    const cases = [
      { name: '200 000 characters, one paragraph', text: makeText(200_000) },
      { name: '200 000 characters, 15 000 invisible (masks only)', text: makeText(200_000, { every: 13 }) },
      {
        name: '200 000 characters in lines of 60, with invisible characters',
        text: makeText(200_000, { every: 29, line: 60 }),
      },
      { name: '5 000 characters with 384 invisible', text: makeText(5000, { every: 13 }) },
    ];
    const report: string[] = [];
    for (const { name, text } of cases) {
      await paste(text);
      await frames();
      await page.evaluate(() => window.__takeBackdrop());
      const middle = Math.floor(text.length / 2);
      await input().evaluate((el: HTMLTextAreaElement, at) => el.setSelectionRange(at, at), middle);
      const taken: Taken[] = [];
      // Typing (as an IME commits), Enter (a paragraph split), Backspace (a join), an invisible character.
      for (const key of ['填', '空', 'Enter', '测', 'Backspace', 'Backspace', '\u200b', '试', '字']) {
        if (key === 'Enter' || key === 'Backspace') await page.keyboard.press(key);
        else await page.keyboard.insertText(key);
        taken.push(await page.evaluate(() => window.__takeBackdrop()));
      }
      report.push(`${name}: ${taken.map((t) => `${t.chars}/${t.nodes}`).join(' ')}`);
      const value = await input().inputValue();
      expect(value.slice(middle, middle + 5), name).toBe('填空\u200b试字');
      await expectShows(value, name);
      for (const [i, t] of taken.entries()) {
        expect(t.chars, `${name}, keystroke ${i + 1}: characters into the backdrop`).toBeLessThanOrEqual(
          MAX_CHARS_PER_KEYSTROKE,
        );
        expect(t.nodes, `${name}, keystroke ${i + 1}: nodes into the backdrop`).toBeLessThanOrEqual(
          MAX_NODES_PER_KEYSTROKE,
        );
      }
    }
    console.log(`characters/nodes into the backdrop per keystroke:\n${report.join('\n')}`);
    // The warnings still count them all, and say when only masks are drawn.
    await paste(makeText(200_000, { every: 13 }));
    expect(await page.getByTestId('warnings').textContent()).toMatch(/发现 15\d{3} 个不可见或特殊字符.*不再逐个标出/);
    expect(await page.locator('#editor-backdrop mark.mark-suspicious').count()).toBe(0);
  });

  test('a run of invisible characters is one highlight, not one per character; the warnings still count each', async () => {
    // Indented paragraphs (two ideographic spaces) ending in zero-width spaces, and one long run.
    let text = '';
    for (let i = 0; i < 90; i++) text += `\u3000\u3000${POEM.repeat(2).slice(0, 45)}\u200b\u200b\n`;
    text += `${'\u200b'.repeat(24)}${POEM.slice(0, 20)}[MASK]`;
    const suspicious = findSuspicious(text);
    expect(suspicious.length).toBe(384);
    await paste(text);
    await expectShows(text, 'runs');
    expect(await page.locator('#editor-backdrop mark.mark-suspicious').count()).toBeLessThanOrEqual(
      merged(suspicious).length,
    );
    expect(merged(suspicious).length).toBe(181);
    const warnings = page.getByTestId('warnings');
    expect(await warnings.textContent()).toMatch(
      /发现 384 个不可见或特殊字符（可能来自复制粘贴）：第 1 字 · 全角空格 U\+3000第 2 字/,
    );
    expect(await warnings.textContent()).toMatch(/第 48 字 · 零宽空格 U\+200B/);
    // A chip selects its character.
    await warnings.locator('.warning-chip', { hasText: '第 48 字' }).click();
    expect(await input().evaluate((el: HTMLTextAreaElement) => [el.selectionStart, el.selectionEnd])).toEqual([47, 48]);
    await expectGeometry('runs');
  });

  test('random edits: the backdrop always shows the text, its masks and invisible characters where the textarea has them', async () => {
    const snippets = [
      '春',
      '眠不觉晓',
      '[MASK]',
      '【mask】',
      '[MA',
      'SK]',
      '[MASK:shang4]',
      '【MASK：平】',
      '[MASK:',
      'an4]',
      '\u200b',
      '\u3000\u3000',
      '\n',
      '\n\n',
      '😀',
      'e\u0301',
      'word ',
      '\t',
      '\u202e',
      POEM.repeat(14), // longer than a piece
      `${POEM.repeat(3)}\n${'\u200b'.repeat(30)}`,
      `${POEM.repeat(2)}[MASK]\n`.repeat(30), // many paragraphs: blocks are cut
    ];
    // EDITOR_FUZZ_SEED / EDITOR_FUZZ_STEPS run other or longer sequences.
    let seed = Number(process.env.EDITOR_FUZZ_SEED ?? 11);
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let text = Array.from({ length: 400 }, () => snippets[random(snippets.length)]).join('');
    await paste(text);
    await expectShows(text, 'start');
    await expectGeometry('start');
    for (let step = 1, steps = Number(process.env.EDITOR_FUZZ_STEPS ?? 160); step <= steps; step++) {
      const at = random(text.length + 1);
      const cut = random(3) === 0 ? random(random(5) === 0 ? 1200 : 12) : 0;
      const insert = Array.from({ length: random(3) }, () => snippets[random(snippets.length)]).join('');
      const end = Math.min(text.length, at + cut);
      text = text.slice(0, at) + insert + text.slice(end);
      await input().evaluate(
        (el: HTMLTextAreaElement, [value, from, to]) => {
          el.setRangeText(value as string, from as number, to as number, 'end');
          el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText' }));
        },
        [insert, at, end],
      );
      expect(await input().inputValue()).toBe(text);
      await expectShows(text, `step ${step}`);
      if (step % 20 === 0) await expectGeometry(`step ${step}`);
    }
    // Emptied, and typed into again.
    await paste('');
    await expectShows('', 'empty');
    await page.keyboard.insertText('床前明月光\n[MASK]\u3000');
    await expectShows('床前明月光\n[MASK]\u3000', 'typed');
    await expectGeometry('typed');
  });
});
