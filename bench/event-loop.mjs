#!/usr/bin/env node
// The caller's event loop while the Node API fills (issue 28, item 2): 100 concurrent fill()s of
// distinct texts (cache misses), per backend (native = onnxruntime-node, wasm = onnxruntime-web)
// and model, measured in the calling thread with
//   - perf_hooks.monitorEventLoopDelay (1 ms resolution): the worst and p99 delay;
//   - a chain of 1 ms timers: the worst lateness of one, and when the first one (scheduled right
//     after the 100 calls) fired;
//   - a 10 ms interval: ticks seen vs the ticks the wall time allows;
//   - (Linux) the calling thread's own CPU time and run-queue wait (/proc/thread-self/schedstat)
//     between two 1 ms timers: a timer is late either because the thread was busy (JS, the
//     model's work on this thread: `worstBusyMs`, what the library controls) or because it was
//     runnable but the OS gave the CPUs to other threads (`worstWaitMs`, an oversubscribed
//     machine); `mainCpuMs` is the thread's CPU time over the whole run (most of it this probe's
//     own ~1000 readings a second);
//   - the calling thread's garbage collections (`gcMaxMs`: the longest, `gcMs`: all; wall time);
//   - (Linux) `mainCpuPerFillMs`: the calling thread's CPU time per fill over --cpu-fills more
//     concurrent fills with no probe running — what a fill costs the caller's thread, which must
//     not grow with the model's run time.
// (No busy probe such as a setImmediate loop: it would keep the thread runnable, compete with the
// inference threads for the CPUs and measure the OS scheduler instead.)
// Each case runs twice: a quiet pass with only the histogram (a libuv timer in C++), the 10 ms
// interval and the GC observer — what a server's event loop sees, `quiet` in the JSON, the headline —
// and then the diagnostic pass with the 1 ms timer chain and ~1000 schedstat readings a second, whose
// own allocations and garbage collections add to the delays they explain.
// An idle second (no fills) first says what the machine alone gives. Prints a table and writes
// bench/results/event-loop.json (or --out). Asserts nothing.
//
//   node bench/event-loop.mjs [--dist DIR] [--model DIR ...] [--fills N] [--cpu-fills N] [--backends native,wasm]
//     [--threads N] [--out FILE]
//
// Default models: model/default and, when scripts/bench has exported it, the bert-base-shaped
// random model build/bench/tiankong (scripts/make-random-checkpoint --arch bert-base-chinese;
// scripts/export-model --graph core --window 96:64:512). --dist points at another build of the
// package (e.g. a copy of dist/ from before a change) to measure it the same way.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', default: join(root, 'dist') },
    model: { type: 'string', multiple: true },
    fills: { type: 'string', default: '100' },
    'cpu-fills': { type: 'string', default: '20' },
    backends: { type: 'string', default: 'native,wasm' },
    threads: { type: 'string' },
    out: { type: 'string', default: join(root, 'bench', 'results', 'event-loop.json') },
  },
});
const dist = resolve(args.dist);
const { createFillMask } = await import(pathToFileURL(join(dist, 'index.js')).href);
const fills = Number(args.fills);
const models =
  args.model ??
  [join(root, 'model', 'default'), join(root, 'build', 'bench', 'tiankong')].filter((dir) =>
    existsSync(join(dir, 'model.json')),
  );
const backends = args.backends.split(',');

const POEM =
  '春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。床前明月光，疑是地上霜。举头望明月，低头思故乡。' +
  '白日依山尽，黄河入海流。欲穷千里目，更上一层楼。';
let serial = 0;
/** A text of ~60 tokens with one mask that no earlier fill had (a cache miss). */
const fresh = () => `${POEM}第${serial++}句[MASK]。`;
const ms = (x) => +x.toFixed(2);
/** The calling thread's [CPU ns, run-queue wait ns] (Linux), or null. */
const schedstat = existsSync('/proc/thread-self/schedstat')
  ? () => readFileSync('/proc/thread-self/schedstat', 'utf8').trim().split(' ').slice(0, 2).map(Number)
  : () => null;

/**
 * Runs `work` while the probes watch the calling thread's event loop; returns what they saw.
 * `work` is started synchronously (its synchronous part counts, as it does for a caller).
 */
async function watch(work, { quiet = false } = {}) {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let worstTimerLateMs = 0;
  let worstBusyMs = 0;
  let worstWaitMs = 0;
  const gcs = [];
  const gcObserver = new PerformanceObserver((list) => gcs.push(...list.getEntries().map((e) => e.duration)));
  gcObserver.observe({ entryTypes: ['gc'] });
  let firstTimerMs = null;
  let intervalTicks = 0;
  let running = true;
  const started = performance.now();
  const schedStarted = schedstat();
  let sched = schedStarted;
  histogram.enable();
  const interval = setInterval(() => intervalTicks++, 10);
  let last = performance.now();
  const timer = () => {
    const now = performance.now();
    worstTimerLateMs = Math.max(worstTimerLateMs, now - last - 1);
    last = now;
    const next = schedstat();
    if (next && sched) {
      worstBusyMs = Math.max(worstBusyMs, (next[0] - sched[0]) / 1e6);
      worstWaitMs = Math.max(worstWaitMs, (next[1] - sched[1]) / 1e6);
    }
    sched = next;
    if (running) setTimeout(timer, 1);
  };
  const result = work();
  const issuedMs = performance.now() - started;
  last = performance.now();
  sched = schedstat();
  if (!quiet) {
    setTimeout(() => {
      firstTimerMs = performance.now() - started;
      timer();
    }, 1);
  }
  await result;
  running = false;
  const wallMs = performance.now() - started;
  const schedEnded = schedstat();
  gcs.push(...gcObserver.takeRecords().map((e) => e.duration));
  gcObserver.disconnect();
  clearInterval(interval);
  histogram.disable();
  await new Promise((r) => setTimeout(r, 5)); // let the last timer end
  const common = {
    wallMs: ms(wallMs),
    maxDelayMs: ms(histogram.max / 1e6),
    p99DelayMs: ms(histogram.percentile(99) / 1e6),
    meanDelayMs: ms(histogram.mean / 1e6),
    gcMaxMs: ms(Math.max(0, ...gcs)),
    gcMs: ms(gcs.reduce((a, b) => a + b, 0)),
    intervalTicks,
    intervalExpected: Math.floor(wallMs / 10),
  };
  if (quiet) return common;
  return {
    ...common,
    issueMs: ms(issuedMs),
    firstTimerMs: firstTimerMs === null ? null : ms(firstTimerMs),
    worstTimerLateMs: ms(worstTimerLateMs),
    worstBusyMs: schedEnded ? ms(worstBusyMs) : null,
    worstWaitMs: schedEnded ? ms(worstWaitMs) : null,
    mainCpuMs: schedEnded ? ms((schedEnded[0] - schedStarted[0]) / 1e6) : null,
  };
}

const rows = [];
const print = (row) => {
  const head = [row.model.padEnd(28), row.backend.padEnd(6), String(row.fills).padStart(4)];
  const { quiet } = row;
  console.log(
    [
      ...head,
      `quiet: maxDelay ${quiet.maxDelayMs}`,
      `p99 ${quiet.p99DelayMs}`,
      `gcMax ${quiet.gcMaxMs}`,
      `ticks ${quiet.intervalTicks}/${quiet.intervalExpected}`,
      `wall ${quiet.wallMs}`,
    ].join('  '),
  );
  console.log(
    [
      ...head,
      `wall ${row.wallMs}`,
      `maxDelay ${row.maxDelayMs}`,
      `p99 ${row.p99DelayMs}`,
      `issue ${row.issueMs}`,
      `first1ms ${row.firstTimerMs}`,
      `worst1msLate ${row.worstTimerLateMs}`,
      `busy ${row.worstBusyMs}`,
      `wait ${row.worstWaitMs}`,
      `mainCpu ${row.mainCpuMs}`,
      `gcMax ${row.gcMaxMs}`,
      `cpu/fill ${row.mainCpuPerFillMs ?? '-'}`,
      `ticks ${row.intervalTicks}/${row.intervalExpected}`,
      `runs ${row.runs ?? '-'}`,
    ].join('  '),
  );
};

const idleSecond = () => new Promise((r) => setTimeout(r, 1000));
const idle = {
  model: '(idle)',
  backend: '-',
  fills: 0,
  quiet: await watch(idleSecond, { quiet: true }),
  ...(await watch(idleSecond)),
};
rows.push(idle);
print(idle);
for (const model of models) {
  for (const backend of backends) {
    const tk = await createFillMask({
      model,
      backend: backend === 'native' ? 'auto' : backend,
      ...(args.threads ? { threads: Number(args.threads) } : {}),
    });
    const stats = tk.stats();
    if (backend === 'native' && stats.backend !== 'native') {
      console.warn(`${model}: onnxruntime-node is not installed: native skipped`);
      await tk.dispose();
      continue;
    }
    for (let i = 0; i < 3; i++) await tk.fill(fresh()); // warm-up
    const one = await tk.fill(fresh());
    const concurrentFills = () => Promise.all(Array.from({ length: fills }, () => tk.fill(fresh())));
    const quiet = await watch(concurrentFills, { quiet: true });
    const runsBefore = tk.stats().runs;
    const seen = await watch(concurrentFills);
    const cpuFills = Number(args['cpu-fills']);
    const cpuBefore = schedstat();
    await Promise.all(Array.from({ length: cpuFills }, () => tk.fill(fresh())));
    const cpuAfter = schedstat();
    const row = {
      model: stats.model.name,
      modelDir: relative(root, resolve(model)),
      backend: stats.backend,
      threads: stats.threads,
      fills,
      oneFillMs: ms(one.timings.totalMs),
      runs: tk.stats().runs - runsBefore - cpuFills,
      quiet,
      ...seen,
      mainCpuPerFillMs: cpuAfter ? +((cpuAfter[0] - cpuBefore[0]) / 1e6 / cpuFills).toFixed(3) : null,
    };
    rows.push(row);
    print(row);
    await tk.dispose();
  }
}
const out = resolve(args.out);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      loadavg: loadavg().map((x) => +x.toFixed(2)),
      dist: relative(root, dist) || '.',
      rows,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${relative(root, out)}`);
