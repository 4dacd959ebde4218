// Short soak runs (tests/harness/soak.mjs; scripts/soak runs 10 000 Node + 2 000 Chromium fills):
// a mixed workload of cache hits, misses, rejected and hostile inputs must never throw anything
// but a TiankongError, keep the cache within its bounds, and plateau in memory once the cache is
// full — loose bounds, so they catch leaks of wasm objects or unbounded structures, not noise.
// No timing is asserted.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { CHROMIUM, launchChromium } from '../harness/chromium.mjs';
import { startPackageOrigin } from '../harness/package-origin.mjs';
import { soakBrowser, soakNode } from '../harness/soak.mjs';
import { distDir, missingPrerequisite, repoRoot, testModelDir } from '../runtime/fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);
const noChromium = existsSync(CHROMIUM) ? null : `${CHROMIUM} not found: browser soak skipped`;

// Small, so it is full (and evicting) well before the middle sample.
const CACHE = { maxEntries: 40, maxBytes: 32 << 10 };
const MB = 1 << 20;

function expectHealthy(run: Awaited<ReturnType<typeof soakNode>>) {
  expect(run.unexpected).toEqual([]);
  expect(run.counts.unexpected).toBe(0);
  expect(run.counts.resolved + run.counts.rejected).toBe(run.fills);
  expect(run.counts.rejected).toBeGreaterThan(0);
  expect(run.cache.evictions, 'the run filled the cache').toBeGreaterThan(0);
  expect(run.cache.hits).toBeGreaterThan(0);
  for (const s of run.samples) {
    expect(s.cacheEntries).toBeLessThanOrEqual(CACHE.maxEntries);
    expect(s.cacheBytes).toBeLessThanOrEqual(CACHE.maxBytes);
  }
}

describe.skipIf(missing !== null)('soak (short)', () => {
  test('Node: 300 mixed fills, wasm heaps flat, JS heap bounded', async () => {
    const run = await soakNode({ distDir, model: testModelDir(), fills: 300, samples: 6, warmup: 30, cache: CACHE });
    expectHealthy(run);
    const { coreWasmHeapBytes: core, ortWasmHeapBytes: ort, jsHeapUsedBytes: js } = run.summary;
    // Wasm memory never shrinks, so any growth in the second half is a leak or an unbounded structure.
    expect(core!.end).toBe(core!.middle);
    expect(ort!.end).toBeLessThanOrEqual(ort!.middle + 4 * MB);
    expect(js!.end).toBeLessThanOrEqual(js!.middle * 1.5 + 2 * MB);
  });

  test.skipIf(noChromium !== null)('Chromium: 100 mixed fills through the Worker, heaps bounded', async () => {
    const server = await startPackageOrigin({
      distDir,
      ortDir: join(repoRoot, 'node_modules', 'onnxruntime-web', 'dist'),
      models: { soak: testModelDir() },
    });
    const userDataDir = mkdtempSync(join(tmpdir(), 'tiankong-soak-test-'));
    const context = await launchChromium({ userDataDir });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(`${server.origin}/`);
      const run = await soakBrowser({ page, userDataDir, fills: 100, samples: 4, warmup: 30, cache: CACHE });
      expectHealthy(run);
      const { workerJsHeapUsedBytes: worker, rendererRssBytes: rss } = run.summary;
      expect(worker!.end).toBeLessThanOrEqual(worker!.middle * 1.5 + 2 * MB);
      expect(rss!.start).toBeGreaterThan(0);
      expect(rss!.end).toBeLessThanOrEqual(rss!.start * 1.5);
    } finally {
      await context.close();
      await server.close();
      rmSync(userDataDir, { recursive: true, force: true });
    }
  });
});
