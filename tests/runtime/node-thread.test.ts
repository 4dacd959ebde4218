// The Node API keeps the caller's event loop free (issue 28, item 2): the model runs in a worker
// thread (index.ts → node-worker.ts, the browser's protocol), identical requests in flight share
// one model run, and every fill — joint included — is one result-cache lookup. Nothing here is
// timed: the assertions count event-loop turns, model runs and cache lookups.
// bench/event-loop.mjs measures the delays (RELIABILITY.md).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillMaskModel, FillResult, TiankongErrorCode } from '../../web/src/index.js';
import { api, distDir, missingPrerequisite, testModelDir } from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const codeOf = (error: unknown) => (error as { code?: TiankongErrorCode }).code ?? String(error);
const lookups = (tk: FillMaskModel) => tk.stats().cache.hits + tk.stats().cache.misses;
const POEM = '春眠不觉晓处处闻啼鸟夜来风雨声花落知多少';
/** Two characters of the poem per `n` (other tokens than any earlier n's: digits may all be [UNK]). */
const serialChars = (n: number) => `${POEM[n % POEM.length]}${POEM[Math.floor(n / POEM.length) % POEM.length]}`;
/** A long text (most of the test model's 128 tokens) with `masks` adjacent masks, new for each `n` < 400. */
const longText = (n: number, masks = 1) => `${POEM.repeat(4)}${serialChars(n)}${'[MASK]'.repeat(masks)}。`;

/** setImmediate turns of this thread while `work` is pending (a spinning loop of turns). */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let spinning = true;
  const spin = () => {
    turns++;
    if (spinning) setImmediate(spin);
  };
  setImmediate(spin);
  try {
    await work();
  } finally {
    spinning = false;
  }
  return turns;
}

describe.skipIf(missing !== null)('the Node API runs the model off the calling thread', () => {
  let native: FillMaskModel;
  let wasm: FillMaskModel;
  let serial = 0;

  beforeAll(async () => {
    const { createFillMask } = await api();
    const model = testModelDir();
    [native, wasm] = await Promise.all([
      createFillMask({ model, threads: 1 }),
      createFillMask({ model, backend: 'wasm', threads: 1 }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([native?.dispose(), wasm?.dispose()]);
  });

  for (const backend of ['native', 'wasm'] as const) {
    test(`${backend}: the caller's event loop keeps turning while the model runs`, async () => {
      const tk = backend === 'native' ? native : wasm;
      expect(tk.stats().backend).toBe(backend);
      await tk.fill(longText(serial++)); // warm-up
      const runsBefore = tk.stats().runs;
      // 10 uncached fills and a joint search of 4 adjacent masks (1 + 3·3 runs): in-process, each
      // model run held the thread and the engine yielded one turn between runs.
      const turns = await turnsDuring(() =>
        Promise.all([
          ...Array.from({ length: 10 }, () => tk.fill(longText(serial++))),
          tk.fill(longText(serial++, 4), { joint: true, beam: 3 }),
        ]),
      );
      const runs = tk.stats().runs - runsBefore;
      console.log(`${backend}: ${turns} event-loop turns during ${runs} model runs`);
      expect(runs).toBeGreaterThanOrEqual(10 + 1 + 3);
      expect(turns).toBeGreaterThan(20 * runs);
    });
  }

  test.skipIf(!existsSync('/proc/thread-self'))(
    'Linux: the engine and inference threads run at a lower priority than the calling thread',
    async () => {
      await native.fill(longText(serial++));
      await wasm.fill(longText(serial++));
      // Field 19 of /proc/<pid>/task/<tid>/stat (after the parenthesised name) is the nice value.
      const niceOf = (tid: string) =>
        Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
      const own = niceOf(readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0]!);
      const threads = readdirSync('/proc/self/task').map(niceOf);
      const lowered = Math.min(19, own + 10);
      // The two engine threads (native, wasm) at least; the backends' own threads, when they start
      // any at one thread (it varies by machine), inherit the lowered priority.
      expect(threads.filter((nice) => nice === lowered).length).toBeGreaterThanOrEqual(2);
    },
  );

  test('10 identical fills in flight share one model run (one lookup each); the results are equal', async () => {
    const text = longText(serial++);
    const runs = native.stats().runs;
    const before = lookups(native);
    const results = await Promise.all(Array.from({ length: 10 }, () => native.fill(text, { topK: 3 })));
    expect(native.stats().runs - runs).toBe(1);
    expect(lookups(native) - before).toBe(10);
    for (const result of results) {
      expect(result.masks).toEqual(results[0]!.masks);
    }
    // The first runs; the others join it in flight, or (a fast model) find its entry in the cache.
    expect(results[0]!.cached).toBe(false);
    // Another spelling of the same tokens (full-width mask) joins too; other options do not.
    const spelled = longText(serial++);
    const mixed = await Promise.all([
      native.fill(spelled),
      native.fill(spelled.replace('[MASK]', '［MASK］')),
      native.fill(spelled, { topK: 2 }),
    ]);
    expect(native.stats().runs - runs).toBe(1 + 2);
    expect(mixed[1]!.masks[0]!.candidates).toEqual(
      mixed[0]!.masks[0]!.candidates.map((c) => ({ ...c, sequence: expect.any(String) })),
    );
  });

  test('identical explains and joint fills in flight share their runs too', async () => {
    const text = longText(serial++, 2);
    const runs = wasm.stats().runs;
    const joint = await Promise.all([1, 2, 3].map(() => wasm.fill(text, { joint: true, beam: 2 })));
    // One rows run + one search (1 + 2·1 runs) for all three.
    expect(wasm.stats().runs - runs).toBe(1 + 3);
    expect(joint[1]!.words).toEqual(joint[0]!.words);
    const token = joint[0]!.masks[0]!.candidates[0]!.token;
    const afterJoint = wasm.stats().runs;
    const explained = await Promise.all([1, 2].map(() => wasm.explain(text, 0, token)));
    expect(wasm.stats().runs - afterJoint).toBe(explained[0]!.timings.runs);
    expect(explained[1]!.tokens).toEqual(explained[0]!.tokens);
  });

  test('a caller that cancels leaves the shared run to the others; when all cancel, it never runs', async () => {
    const text = longText(serial++);
    const runs = native.stats().runs;
    const controller = new AbortController();
    const outcomes = Promise.all([
      native.fill(text, { signal: controller.signal }).then(() => 'resolved', codeOf),
      native.fill(text).then(() => 'resolved', codeOf),
      native.fill(text).then(() => 'resolved', codeOf),
    ]);
    controller.abort();
    expect(await outcomes).toEqual(['ABORTED', 'resolved', 'resolved']);
    expect(native.stats().runs - runs).toBe(1);

    // Behind another fill, two equal requests both cancelled before their turn: skipped.
    const ahead = native.fill(longText(serial++));
    const skipped = longText(serial++);
    const first = new AbortController();
    const second = new AbortController();
    const cancelled = Promise.all(
      [first, second].map((c) => native.fill(skipped, { signal: c.signal }).then(() => 'resolved', codeOf)),
    );
    first.abort();
    second.abort();
    expect(await cancelled).toEqual(['ABORTED', 'ABORTED']);
    await ahead;
    const again: FillResult = await native.fill(skipped);
    expect(again.cached).toBe(false); // it had never run
    expect(native.stats().runs - runs).toBe(1 + 2);
  });

  test('a joint fill is one cache lookup: one miss cold, one hit warm; plain and joint share the entry', async () => {
    const text = longText(serial++, 3);
    const cache = () => native.stats().cache;
    const cold = cache();
    const first = await native.fill(text, { joint: true, beam: 2 });
    expect(first.cached).toBe(false);
    expect(cache().misses - cold.misses).toBe(1);
    expect(cache().hits - cold.hits).toBe(0);
    const warm = cache();
    const runs = native.stats().runs;
    const second = await native.fill(text, { joint: true, beam: 2 });
    expect(second.cached).toBe(true);
    expect(second.words).toEqual(first.words);
    expect(cache().hits - warm.hits).toBe(1);
    expect(cache().misses - warm.misses).toBe(0);
    // The plain fill hits the same entry; another beam reuses its rows and runs only its search.
    expect((await native.fill(text)).cached).toBe(true);
    const other = await native.fill(text, { joint: true, beam: 3 });
    expect(other.cached).toBe(false);
    expect(cache().hits - warm.hits).toBe(3);
    expect(cache().misses - warm.misses).toBe(0);
    expect(native.stats().runs - runs).toBeLessThanOrEqual(1 + 3 * 2); // the search alone: no rows run
  });

  test('across the thread: error codes and indexes, stats after an error, progress events on this thread', async () => {
    const { createFillMask, TiankongError } = await api();
    const error = await native.fillBatch(['春[MASK]', '秋天']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TiankongError);
    expect(error).toMatchObject({ code: 'NO_MASK', index: 1 });
    const before = native.stats().cache;
    await native.fill('[MASK]', { signal: AbortSignal.abort() }).catch(() => undefined);
    expect(native.stats().cache.misses + native.stats().cache.hits).toBe(before.misses + before.hits);
    // An already-aborted signal: the text's own error comes first, as in-process.
    expect(await native.fill('没有掩码', { signal: AbortSignal.abort() }).catch(codeOf)).toBe('NO_MASK');
    const files: string[] = [];
    const tk = await createFillMask({ model: testModelDir(), onProgress: (p) => files.push(p.file) });
    expect(files).toEqual(expect.arrayContaining(['model.json', 'vocab.txt', 'model.onnx']));
    await tk.dispose();
    const thrown = new Error('progress boom');
    const failed = await createFillMask({
      model: testModelDir(),
      onProgress: () => {
        throw thrown;
      },
    }).catch((e: unknown) => e);
    // Every rejection is a TiankongError (issue 28, item 4), naming what the callback threw.
    expect(failed).toMatchObject({
      code: 'BAD_OPTION',
      message: `tiankong: the onProgress callback threw: ${thrown.message}`,
    });
  });

  test('process.exit() while native fills run: the process exits cleanly (the thread ends between model runs)', () => {
    // Ending a worker thread while onnxruntime-node is inside a run aborted the process (SIGABRT,
    // status 134, "terminate called after throwing an instance of 'Napi::Error'") — in about 4
    // of 10 exits with ONNX Runtime's thread pool on (threads > 1); 8 tries miss that under 2 %.
    const entry = pathToFileURL(join(distDir, 'index.js')).href;
    const script = `const { createFillMask } = await import(${JSON.stringify(entry)});
const tk = await createFillMask({ model: ${JSON.stringify(testModelDir())} });
const P = '春眠不觉晓处处闻啼鸟夜来风雨声花落知多少';
const text = (i) => P.repeat(5) + P[i % 20] + P[Math.floor(i / 20) % 20] + '[MASK][MASK]';
let done = 0;
for (let i = 0; i < 400; i++) tk.fill(text(i), { joint: true, beam: 4 }).then(() => { if (++done === 3) process.exit(0); });`;
    for (let attempt = 0; attempt < 8; attempt++) {
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect({ status: child.status, signal: child.signal, stderr: child.stderr }).toEqual({
        status: 0,
        signal: null,
        stderr: '',
      });
    }
  });

  test('a process that never calls dispose() still exits when its work is done', () => {
    const entry = pathToFileURL(join(distDir, 'index.js')).href;
    const script = `const { createFillMask } = await import(${JSON.stringify(entry)});
const tk = await createFillMask({ model: ${JSON.stringify(testModelDir())} });
console.log((await tk.fill('春[MASK]')).masks.length);`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect({ stderr: child.stderr, error: child.error?.message, signal: child.signal }).toEqual({
      stderr: '',
      error: undefined,
      signal: null,
    });
    expect(child.stdout.trim()).toBe('1');
    expect(child.status).toBe(0);
  });
});
