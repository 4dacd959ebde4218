// Benchmark of the app's editor (issue 28, item 6): what a paste and what a keystroke cost, in
// headless Chromium, for plain text and for text full of invisible characters. Prints numbers and
// writes JSON; asserts nothing.
//
// The app (web/app) is built twice with the tiny test model: from the working tree ("after") and
// with web/app/src and web/app/index.html taken from a baseline commit ("before", default: the
// last commit before the bounded editor). A third page is a bare textarea styled like the app's
// ("textarea": the browser's own cost of editing that much text, the floor of any overlay
// editor). All are measured in the same run, alternating, on fresh pages of one browser, so their
// ratios are comparable even on a busy machine.
//
// Per case: paste (the text on the clipboard, then Ctrl+V into the empty editor) and nine
// keystrokes in the middle of the text (one-character insertions, as an IME commits them, and two
// Backspaces). A sample is the time from the edit's beforeinput event (before the textarea
// changes) to a task after the next frame (the browser's editing, the app's handlers, style,
// layout and paint of that frame); long tasks are counted too.
//
//   node bench/editor-paste.mjs [--baseline REF|none] [--runs N] [--cases a,b] [--model DIR] [--out FILE]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'vite';
import { startAppServer } from '../scripts/serve.mjs';
import { launchChromium } from '../tests/harness/chromium.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/**
 * The editor before the bounded one (bench/results/editor-paste.json was measured against it): it
 * re-rendered the whole text run around a keystroke. Its web/app/src/editor.ts is the one every
 * commit had up to this change; later commits only gave text-marks.ts sound-constrained masks and
 * styles.css the pinyin rules. Any other ref: --baseline.
 */
const PREVIOUS_EDITOR = 'af0a400';

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string', default: PREVIOUS_EDITOR },
    runs: { type: 'string', default: '3' },
    model: { type: 'string' },
    out: { type: 'string', default: join(REPO, 'bench/results/editor-paste.json') },
    cases: { type: 'string' },
  },
});
const runs = Math.max(1, Number(args.runs));

// ---- inputs -------------------------------------------------------------------------------

const POEM = '春眠不觉晓处处闻啼鸟夜来风雨声花落知多少床前明月光疑是地上霜举头望明月低头思故乡';
/** `length` characters of Chinese text; every `every`-th character (if any) an invisible one, alternating U+200B and U+3000. */
function makeText(length, every = 0) {
  let out = '';
  let invisible = 0;
  for (let i = 0; out.length < length - 6; i++) {
    if (every > 0 && i % every === every - 1) out += invisible++ % 2 === 0 ? '\u200b' : '\u3000';
    else out += POEM[i % POEM.length];
  }
  return { text: `${out}[MASK]`, invisible };
}

/** Paragraphs as pasted from an article: indented with two ideographic spaces, ending in zero-width spaces. */
function makeArticle(length, line = 60) {
  let out = '';
  for (let i = 0; out.length + line <= length - 6; i++) {
    const from = i % POEM.length;
    out += `\u3000\u3000${POEM.repeat(3).slice(from, from + line - 5)}\u200b\u200b\n`;
  }
  const text = `${out}${POEM.repeat(2).slice(0, length - 6 - out.length)}[MASK]`;
  return { text, invisible: (text.match(/[\u3000\u200b]/g) ?? []).length };
}

const CASES = [
  { name: 'plain-5000', ...makeText(5000) },
  // 384 invisible characters in 5 000 (the tester's paste): every 13th character, or as paragraph indents and ends.
  { name: 'invisible-5000', ...makeText(5000, 13) },
  { name: 'article-5000', ...makeArticle(5000, 52) },
  { name: 'plain-200000', ...makeText(200_000) },
  { name: 'invisible-200000', ...makeText(200_000, 13) },
  { name: 'article-200000', ...makeArticle(200_000) },
];
/** Nine keystrokes: insertions and two Backspaces; what they leave at the cursor. */
if (args.cases) {
  const wanted = args.cases.split(',');
  CASES.splice(0, CASES.length, ...CASES.filter((c) => wanted.includes(c.name)));
  if (CASES.length === 0) throw new Error(`--cases: none of ${args.cases}`);
}
const KEYSTROKES = ['填', '空', '测', 'Backspace', '试', '字', 'Backspace', '好', '句'];
const TYPED = '填空试好句';
// ---- building -----------------------------------------------------------------------------

function tinyModel(work) {
  if (args.model) return resolve(args.model);
  execFileSync('bash', [join(REPO, 'scripts/make-test-model'), join(work, 'model')], { stdio: 'ignore' });
  return join(work, 'model/mask-only');
}

/** Vite plugin: web/app/src/* and web/app/index.html as they were at `ref` (files the ref lacks stay as they are). */
function baselineSources(ref) {
  const appDir = join(REPO, 'web/app');
  const at = (file) => {
    try {
      return execFileSync('git', ['show', `${ref}:web/app/${file}`], {
        cwd: REPO,
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      });
    } catch {
      return null;
    }
  };
  return {
    name: 'editor-bench-baseline',
    enforce: 'pre',
    load(id) {
      const file = relative(appDir, id.split('?')[0]);
      return file.startsWith('src/') && !file.startsWith('src/sw/') ? (at(file) ?? undefined) : undefined;
    },
    transformIndexHtml: { order: 'pre', handler: (html) => at('index.html') ?? html },
  };
}

async function buildApp(modelDir, outDir, ref) {
  const previous = process.env.TIANKONG_MODEL_DIR;
  process.env.TIANKONG_MODEL_DIR = modelDir;
  try {
    await build({
      configFile: join(REPO, 'web/app/vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
      plugins: ref ? [baselineSources(ref)] : [],
    });
  } finally {
    if (previous === undefined) delete process.env.TIANKONG_MODEL_DIR;
    else process.env.TIANKONG_MODEL_DIR = previous;
  }
}

// ---- measuring ----------------------------------------------------------------------------

/**
 * In the page: per edit, from its beforeinput to a task after the next frame (`total`, what the
 * user waits for), and the main thread's share of it (`busy`: the browser's editing and the
 * input handlers, then the frame from its first requestAnimationFrame callback to the task after
 * it: style, layout, paint); the wait for the frame in between is not work. Long tasks too.
 */
const RECORDER = `
  window.__edits = [];
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  addEventListener('beforeinput', () => {
    const start = performance.now();
    let handled = start;
    let frameStart = start;
    // Capture: this frame callback runs before any the app asks for while handling the input.
    addEventListener('input', () => requestAnimationFrame(() => {
      frameStart = performance.now();
      setTimeout(() => {
        const end = performance.now();
        window.__edits.push({ start, input: handled - start, frame: end - frameStart, busy: handled - start + end - frameStart, total: end - start });
      });
    }), { once: true, capture: true });
    addEventListener('input', () => { handled = performance.now(); }, { once: true });
  }, { capture: true });
`;

/** A bare textarea with the app's styles (written into the app build as bare.html). */
function writeBarePage(appDir) {
  const css = readFileSync(join(appDir, 'index.html'), 'utf8').match(/href="\.\/(assets\/[^"]+\.css)"/)?.[1];
  if (!css) throw new Error('the app build has no stylesheet');
  writeFileSync(
    join(appDir, 'bare.html'),
    `<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><link rel="stylesheet" href="./${css}"></head>` +
      '<body><main><section class="card"><div class="editor">' +
      '<textarea id="input" data-testid="input" rows="3" spellcheck="false"></textarea>' +
      '</div></section></main></body></html>',
  );
}

async function openPage(context, origin, variant) {
  const page = await context.newPage();
  if (variant === 'textarea') {
    await page.goto(`${origin}/bare.html`);
    return page;
  }
  await page.goto(`${origin}/`);
  await page.getByTestId('status').filter({ hasText: '模型已就绪' }).waitFor({ timeout: 120_000 });
  return page;
}

const edits = (page) => page.evaluate(() => window.__edits.length);
async function waitEdits(page, n) {
  await page.waitForFunction((count) => window.__edits.length >= count, n, { timeout: 120_000, polling: 20 });
}

/** One case on a fresh page: the paste, then the keystrokes in the middle. */
async function measureCase(context, origin, variant, testCase) {
  const page = await openPage(context, origin, variant);
  try {
    const input = page.getByTestId('input');
    await input.focus();
    let n = await edits(page);
    // A paste as the user makes one: the clipboard, then Ctrl+V (an insertText of text with
    // newlines would be typed paragraph by paragraph, which takes Chromium tens of seconds).
    await page.evaluate((text) => navigator.clipboard.writeText(text), testCase.text);
    await page.keyboard.press('Control+V');
    await waitEdits(page, ++n);
    const middle = Math.floor(testCase.text.length / 2);
    await page.evaluate(
      ([at, bare]) => {
        const el = document.querySelector('textarea');
        // The bare textarea never grows: what it costs is the browser's editing alone.
        if (bare) el.style.height = `${el.scrollHeight + 2000}px`;
        el.setSelectionRange(at, at);
      },
      [middle, variant === 'textarea'],
    );
    await page.waitForTimeout(100);
    const longBefore = await page.evaluate(() => window.__longTasks.length);
    for (const key of KEYSTROKES) {
      if (key === 'Backspace') await page.keyboard.press(key);
      else await page.keyboard.insertText(key);
      await waitEdits(page, ++n);
    }
    const result = await page.evaluate(
      ([from]) => ({ edits: window.__edits, longTasks: window.__longTasks.slice(from) }),
      [longBefore],
    );
    const value = await input.inputValue();
    if (value.slice(middle, middle + TYPED.length) !== TYPED) throw new Error(`${testCase.name}: typed text missing`);
    const [paste, ...keys] = result.edits.map((e) => e.total);
    const [pasteBusy, ...keysBusy] = result.edits.map((e) => e.busy);
    const backdrop = await page.evaluate(() => {
      const root = document.getElementById('editor-backdrop');
      if (!root) return { nodes: 0, marks: 0 };
      let nodes = 0;
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_ALL);
      while (walker.nextNode()) nodes++;
      return { nodes, marks: root.querySelectorAll('mark').length };
    });
    return {
      paste_ms: paste,
      paste_busy_ms: pasteBusy,
      keystroke_ms: keys,
      keystroke_busy_ms: keysBusy,
      keystrokes_total_ms: keys.reduce((a, b) => a + b, 0),
      keystrokes_busy_ms: keysBusy.reduce((a, b) => a + b, 0),
      keystroke_long_tasks: result.longTasks.length,
      keystroke_long_task_ms: result.longTasks.reduce((sum, t) => sum + t.duration, 0),
      backdrop_nodes: backdrop.nodes,
      backdrop_marks: backdrop.marks,
    };
  } finally {
    await page.close();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x) => Math.round(x * 10) / 10;

// ---- run ----------------------------------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), 'tiankong-editor-bench-'));
const baseline = args.baseline === 'none' ? null : args.baseline;
const variants = baseline ? ['before', 'after', 'textarea'] : ['after', 'textarea'];
const servers = {};
try {
  const modelDir = tinyModel(work);
  for (const variant of variants.filter((v) => v !== 'textarea')) {
    await buildApp(modelDir, join(work, variant), variant === 'before' ? baseline : null);
    servers[variant] = await startAppServer({ root: join(work, variant) });
  }
  writeBarePage(join(work, 'after'));
  servers.textarea = servers.after;
  const context = await launchChromium({ viewport: { width: 1280, height: 900 }, localOnly: true });
  for (const server of new Set(Object.values(servers)))
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.origin });
  await context.addInitScript(RECORDER);
  const samples = Object.fromEntries(variants.map((v) => [v, Object.fromEntries(CASES.map((c) => [c.name, []]))]));
  try {
    for (let run = 0; run < runs; run++) {
      for (const testCase of CASES) {
        for (const variant of run % 2 === 0 ? variants : [...variants].reverse()) {
          const sample = await measureCase(context, servers[variant].origin, variant, testCase);
          samples[variant][testCase.name].push(sample);
          console.log(
            `run ${run + 1}/${runs} ${variant.padEnd(8)} ${testCase.name.padEnd(17)} paste ${Math.round(sample.paste_ms)} ms ` +
              `(busy ${Math.round(sample.paste_busy_ms)}), keystrokes ${sample.keystroke_ms.map(Math.round).join(' ')} ms ` +
              `(sum ${Math.round(sample.keystrokes_total_ms)}, busy ${Math.round(sample.keystrokes_busy_ms)}), ` +
              `long tasks ${sample.keystroke_long_tasks}, backdrop ${sample.backdrop_nodes} nodes, ${sample.backdrop_marks} marks`,
          );
        }
      }
    }
  } finally {
    await context.close();
  }

  const summary = {};
  for (const testCase of CASES) {
    const row = { characters: testCase.text.length, invisible: testCase.invisible };
    for (const variant of variants) {
      const s = samples[variant][testCase.name];
      row[variant] = {
        paste_ms: round(median(s.map((x) => x.paste_ms))),
        paste_busy_ms: round(median(s.map((x) => x.paste_busy_ms))),
        keystroke_median_ms: round(median(s.flatMap((x) => x.keystroke_ms))),
        keystroke_busy_median_ms: round(median(s.flatMap((x) => x.keystroke_busy_ms))),
        keystroke_max_ms: round(Math.max(...s.flatMap((x) => x.keystroke_ms))),
        nine_keystrokes_ms: round(median(s.map((x) => x.keystrokes_total_ms))),
        nine_keystrokes_busy_ms: round(median(s.map((x) => x.keystrokes_busy_ms))),
        keystroke_long_tasks: median(s.map((x) => x.keystroke_long_tasks)),
        backdrop_nodes: s[0].backdrop_nodes,
        backdrop_marks: s[0].backdrop_marks,
      };
    }
    const ratio = (a, b) => ({
      paste: round(row[a].paste_ms / row[b].paste_ms),
      paste_busy: round(row[a].paste_busy_ms / row[b].paste_busy_ms),
      nine_keystrokes: round(row[a].nine_keystrokes_ms / row[b].nine_keystrokes_ms),
      nine_keystrokes_busy: round(row[a].nine_keystrokes_busy_ms / row[b].nine_keystrokes_busy_ms),
    });
    if (baseline) row.ratio_before_over_after = ratio('before', 'after');
    row.ratio_after_over_textarea = ratio('after', 'textarea');
    if (baseline) row.ratio_before_over_textarea = ratio('before', 'textarea');
    summary[testCase.name] = row;
  }
  console.log('\nmedians (ms; busy = main-thread work, the rest is waiting for the frame):');
  console.table(
    Object.fromEntries(
      Object.entries(summary).flatMap(([name, row]) =>
        variants.map((v) => [
          `${name} ${v}`,
          {
            paste: row[v].paste_ms,
            'paste busy': row[v].paste_busy_ms,
            key: row[v].keystroke_median_ms,
            'key busy': row[v].keystroke_busy_median_ms,
            '9 keys': row[v].nine_keystrokes_ms,
            '9 keys busy': row[v].nine_keystrokes_busy_ms,
            'long tasks': row[v].keystroke_long_tasks,
          },
        ]),
      ),
    ),
  );
  for (const key of ['ratio_before_over_after', 'ratio_after_over_textarea', 'ratio_before_over_textarea']) {
    if (!summary[CASES[0].name][key]) continue;
    console.log(`${key}:`);
    console.table(Object.fromEntries(Object.entries(summary).map(([name, row]) => [name, row[key]])));
  }

  const out = resolve(args.out);
  mkdirSync(dirname(out), { recursive: true });
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        benchmark: 'editor-paste',
        date: new Date().toISOString(),
        machine: { cpus: cpus().length, cpu: cpus()[0]?.model, loadavg: loadavg().map(round) },
        browser: 'headless Chromium (/usr/bin/chromium), 1280x900',
        before: baseline ? `web/app/src and index.html at ${baseline}` : null,
        after: `working tree on ${head}`,
        textarea: 'a bare textarea with the app styles, never resized (the browser alone)',
        runs,
        method:
          'paste = Ctrl+V of the whole text into the empty editor; keystrokes = seven one-character insertTexts ' +
          'and two Backspaces in the middle; each sample from beforeinput to a task after the next frame (busy: without ' +
          'the wait between the input handlers and the frame); medians over runs',
        summary,
        samples,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`wrote ${relative(REPO, out)}`);
} finally {
  for (const server of Object.values(servers)) await server.close();
  rmSync(work, { recursive: true, force: true });
}
