// Smoke test in a real browser (headless Chromium via playwright-core): both builds load
// from dist/ and tokenize/decode; 'auto' picks threads only on a cross-origin isolated
// page and otherwise falls back to one thread with a warning that says how to fix it.
import { existsSync, readFileSync } from 'node:fs';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHROMIUM, launchChromium } from '../harness/chromium.mjs';
import { readDistFile } from '../harness/package-origin.mjs';
import { startRouteServer } from '../harness/route-server.js';
import * as parity from '../parity/parity.mjs';
import { BERT_BASE_CHINESE, distDir, missingPrerequisite, vocabPath } from './core-builds.js';

const missing =
  missingPrerequisite() ?? (existsSync(CHROMIUM) ? null : `${CHROMIUM} not found: browser smoke test skipped`);
if (missing) console.warn(missing);

const TEXT = '床前明月光，疑是地[MASK]霜。😀';

// The page loads the core the way an app would and reports what happened.
const PAGE = `<!doctype html><meta charset="utf-8"><script type="module">
  const warnings = [];
  try {
    const { loadCore } = await import('./core/load-core.js');
    const variant = new URLSearchParams(location.search).get('variant');
    const core = await loadCore({ variant, onWarning: (m) => warnings.push(m) });
    const vocab = new Uint8Array(await (await fetch('./vocab.txt')).arrayBuffer());
    const tokenizer = new core.module.Tokenizer(vocab, ${JSON.stringify(BERT_BASE_CHINESE)});
    const encoding = tokenizer.encode(${JSON.stringify(TEXT)});
    const decoder = new core.module.Decoder(tokenizer, { topK: 2, threshold: 0, excludeSpecial: true,
      excludeSubwords: true, allowIds: new Int32Array(0), denyIds: new Int32Array(0) });
    const logits = new Float32Array(tokenizer.vocabSize());
    logits[tokenizer.tokenToId('上')] = 9;
    logits[tokenizer.tokenToId('下')] = 8;
    const top = Array.from(decoder.decode(logits, 1, logits.length, undefined, undefined)[0].ids, (id) => tokenizer.idToToken(id));
    window.__result = { variant: core.variant, info: core.module.buildInfo(), isolated: crossOriginIsolated,
      warnings, ids: Array.from(encoding.ids), offsets: Array.from(encoding.offsets), top };
    decoder.delete();
    tokenizer.delete();
    core.dispose();
  } catch (error) {
    window.__result = { error: String(error && error.stack || error), warnings };
  }
</script>`;

describe.skipIf(missing !== null)('core in headless Chromium', () => {
  let server: Awaited<ReturnType<typeof startRouteServer>>;
  let context: BrowserContext;

  beforeAll(async () => {
    // dist/ under /iso/ (COOP/COEP: cross-origin isolated) and /plain/ (without).
    server = await startRouteServer((path) => {
      if (path === 'smoke.html') return PAGE;
      if (path === 'vocab.txt') return readFileSync(vocabPath);
      return readDistFile(distDir, path);
    });
    context = await launchChromium();
  });
  afterAll(async () => {
    await context?.close();
    await server?.close();
  });

  async function run(mode: 'iso' | 'plain', variant: string) {
    const page = await context.newPage();
    try {
      await page.goto(`${server.origin}/${mode}/smoke.html?variant=${variant}`);
      await page.waitForFunction(() => (window as { __result?: unknown }).__result !== undefined, null, {
        timeout: 60_000,
      });
      return await page.evaluate(() => (window as unknown as { __result: Record<string, unknown> }).__result);
    } finally {
      await page.close();
    }
  }

  async function expectWorks(result: Record<string, unknown>) {
    expect(result.error).toBeUndefined();
    const [hf] = await parity.hfEncode(parity.hfTokenizer('bert-base-chinese'), [TEXT]);
    expect(result.ids).toEqual(hf.ids);
    expect(result.offsets).toEqual(hf.offsets.flat());
    expect(result.top).toEqual(['上', '下']);
  }

  test('cross-origin isolated page: auto loads the threaded build', async () => {
    const result = await run('iso', 'auto');
    await expectWorks(result);
    expect(result).toMatchObject({
      variant: 'threads',
      isolated: true,
      warnings: [],
      info: { threads: true, simd: true },
    });
  });

  test('the single-threaded build loads on request', async () => {
    const result = await run('iso', 'single');
    await expectWorks(result);
    expect(result).toMatchObject({ variant: 'single', info: { threads: false, simd: true } });
  });

  test('page without COOP/COEP: auto falls back to one thread and says how to fix it', async () => {
    const result = await run('plain', 'auto');
    await expectWorks(result);
    expect(result).toMatchObject({ variant: 'single', isolated: false, info: { threads: false } });
    expect(result.warnings).toEqual([
      expect.stringMatching(
        /not cross-origin isolated.*Cross-Origin-Opener-Policy: same-origin.*Cross-Origin-Embedder-Policy: require-corp/,
      ),
    ]);
  });
});
