// scripts/bench-check: latency of the spelling check (tk.check, issue 27) on 40-character
// sentences with the default model: in headless Chromium (the package's browser entry, its
// Worker, cross-origin isolated) at 1 and 2 threads, and in Node (wasm and onnxruntime-node) at
// the same thread counts (onnxruntime-node: backend 'auto'), result cache off, sentences interleaved the same way for all. Half the
// sentences carry one wrong character (a homophone), as typed text does. In the page it also
// records the longest main-thread timer delay while a check runs (typing must never wait).
// Writes bench/results/check.json.
//
// usage: node bench/check-bench.mjs [--threads 1,2] [--chars 40] [--sentences 12] [--reps 3]
//          [--out bench/results/check.json] [MODEL_DIR]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT as root } from '../model/tooling/data-paths.mjs';
import { launchBrowser, openHarness } from './lib/browser.mjs';
import { benchMounts, startBenchServer } from './server.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    threads: { type: 'string', default: '1,2' },
    chars: { type: 'string', default: '40' },
    sentences: { type: 'string', default: '12' },
    reps: { type: 'string', default: '3' },
    out: { type: 'string', default: join(root, 'bench', 'results', 'check.json') },
  },
});
const modelDir = resolve(positionals[0] ?? join(root, 'model', 'default'));
const threadCounts = values.threads.split(',').map(Number);
const length = Number(values.chars);
const reps = Number(values.reps);

const PARAGRAPH =
  '春天来了，公园里的花都开了，孩子们在草地上放风筝，老人们坐在长椅上聊天。' +
  '我们明天早上八点在学校门口集合，然后一起坐车去博物馆参观古代的文物和书画。' +
  '天气预报说今天下午有大雨，出门的时候记得带上雨伞，路上开车也要注意安全。' +
  '这家饭店的菜做得很好吃，服务员也很热情，下次我还想带家里人一起来这里吃饭。' +
  '快递员把包裹放在门口了，我下班回家以后才看到，里面是妈妈给我寄来的衣服。' +
  '经理说这个项目下个月就要完成，大家这几天都在加班，希望能按时交给客户。';
/** Homophones typed for the right character (sound errors, the common kind). */
const TYPOS = { 们: '门', 在: '再', 得: '的', 候: '侯', 完: '玩', 望: '往', 记: '计', 意: '易' };

/** `count` windows of `length` characters; every other one with its first typo-able character replaced. */
function sentences(count) {
  const chars = [...PARAGRAPH];
  return Array.from({ length: count }, (_, v) => {
    const start = (v * 17) % (chars.length - length);
    const window = chars.slice(start, start + length);
    if (v % 2 === 1) {
      const at = window.findIndex((c) => c in TYPOS);
      if (at >= 0) window[at] = TYPOS[window[at]];
    }
    return window.join('');
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)];
};
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
};
const summary = (rows) => ({
  p50_ms: median(rows.map((r) => r.ms)),
  p90_ms: percentile(
    rows.map((r) => r.ms),
    0.9,
  ),
  inference_p50_ms: median(rows.map((r) => r.inferenceMs)),
  runs_p50: median(rows.map((r) => r.runs)),
  checked_p50: median(rows.map((r) => r.checked)),
  flagged_share: rows.filter((r) => r.flagged > 0).length / rows.length,
  ...(rows[0]?.lagMs !== undefined ? { page_timer_lag_max_ms: Math.max(...rows.map((r) => r.lagMs)) } : {}),
  samples: rows.length,
});

const texts = sentences(Number(values.sentences));

/** Node: the package's own entry (dist/), cache off, wasm and native backends. */
async function nodeRows(threads) {
  const { createFillMask } = await import(join(root, 'dist', 'index.js'));
  const out = {};
  // 'auto' in Node is onnxruntime-node (stats().backend says 'native').
  for (const [label, backend] of [
    ['wasm', 'wasm'],
    ['native', 'auto'],
  ]) {
    const tk = await createFillMask({ model: modelDir, backend, threads, cache: { maxEntries: 0, maxBytes: 0 } });
    try {
      await tk.check(texts[0]);
      const rows = [];
      for (let r = 0; r < reps; r++) {
        for (const text of texts) {
          const started = performance.now();
          const result = await tk.check(text);
          rows.push({
            ms: performance.now() - started,
            ...result.timings,
            checked: result.checked,
            flagged: result.corrections.length,
          });
        }
      }
      out[label] = { backend: tk.stats().backend, ...summary(rows) };
    } finally {
      await tk.dispose();
    }
  }
  return out;
}

async function chromiumRows() {
  const server = await startBenchServer(
    benchMounts({ repoRoot: root, tiankongModelDir: modelDir, transformersModelDir: modelDir }),
  );
  const browser = await launchBrowser();
  const out = {};
  try {
    const { page, logs } = await openHarness(browser.context, server.origin);
    if (!(await page.evaluate(() => window.bench.isolated)))
      throw new Error('the harness page is not cross-origin isolated');
    for (const threads of threadCounts) {
      const name = `t${threads}`;
      const loaded = await page.evaluate(
        ({ name, threads }) => window.bench.load(name, threads, '今天天气真[MASK]啊', { resultCache: false }),
        { name, threads },
      );
      if (loaded.threads !== threads)
        console.warn(`chromium: asked for ${threads} threads, got ${loaded.threads} (${loaded.threadsReason})`);
      await page.evaluate(({ name, text }) => window.bench.check(name, text), { name, text: texts[0] });
      const rows = [];
      for (let r = 0; r < reps; r++) {
        for (const text of texts)
          rows.push(await page.evaluate(({ name, text }) => window.bench.check(name, text), { name, text }));
      }
      out[threads] = { threads: loaded.threads, ...summary(rows) };
      await page.evaluate((name) => window.bench.dispose(name), name);
    }
    const errors = logs.filter((l) => /^(error|pageerror)/.test(l));
    if (errors.length > 0) console.warn(`chromium console:\n${errors.join('\n')}`);
  } finally {
    await browser.close();
    await server.close();
  }
  return out;
}

try {
  const node = {};
  for (const threads of threadCounts) node[threads] = await nodeRows(threads);
  const chromium = await chromiumRows();
  const result = {
    benchmark: 'spelling check (issue 27): tk.check latency',
    what:
      `${texts.length} sentences of ${length} characters (every other one with one homophone typo), ${reps} passes, ` +
      'result cache off; ms = wall time of the call (Chromium: page -> Worker -> page); runs = batched model runs per check; ' +
      'page_timer_lag_max_ms: the longest delay of a 4 ms page timer while checks ran',
    model: relative(root, modelDir),
    machine: { cpu: cpus()[0]?.model, cores: cpus().length, loadavg: loadavg().map((x) => Number(x.toFixed(2))) },
    sentences: texts,
    chromium,
    node,
  };
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
  for (const threads of threadCounts) {
    const c = chromium[threads];
    const n = node[threads];
    console.log(
      `${threads} thread(s): Chromium p50 ${c.p50_ms.toFixed(0)} ms (p90 ${c.p90_ms.toFixed(0)}, ${c.runs_p50} runs, ` +
        `page timer lag max ${c.page_timer_lag_max_ms.toFixed(1)} ms) · Node wasm ${n.wasm.p50_ms.toFixed(0)} ms · ` +
        `native ${n.native.p50_ms.toFixed(0)} ms`,
    );
  }
  console.log(`wrote ${relative(root, values.out)}`);
} catch (error) {
  console.error(`check-bench: ${error.stack ?? error}`);
  process.exit(1);
}
