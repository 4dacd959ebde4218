// Smoke test in a real browser (headless Chromium via playwright-core): both builds load
// from dist/ and tokenize/decode; 'auto' picks threads only on a cross-origin isolated
// page and otherwise falls back to one thread with a warning that says how to fix it.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
// @ts-expect-error -- plain ESM helper shared with the parity CLI, no typings
import * as parity from '../parity/parity.mjs';
import { BERT_BASE_CHINESE, distDir, missingPrerequisite, vocabPath } from './core-builds.js';

const CHROMIUM = '/usr/bin/chromium';
const missing = missingPrerequisite() ?? (existsSync(CHROMIUM) ? null : `${CHROMIUM} not found: browser smoke test skipped`);
if (missing) console.warn(missing);

const TEXT = '床前明月光，疑是地[MASK]霜。😀';
const MIME: Record<string, string> = {
  '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json', '.txt': 'text/plain; charset=utf-8', '.map': 'application/json',
};

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
    const top = Array.from(decoder.decode(logits, 1, logits.length)[0].ids, (id) => tokenizer.idToToken(id));
    window.__result = { variant: core.variant, info: core.module.buildInfo(), isolated: crossOriginIsolated,
      warnings, ids: Array.from(encoding.ids), offsets: Array.from(encoding.offsets), top };
    decoder.delete();
    tokenizer.delete();
    core.dispose();
  } catch (error) {
    window.__result = { error: String(error && error.stack || error), warnings };
  }
</script>`;

/** Serves dist/ under /iso/ (with COOP/COEP: cross-origin isolated) and /plain/ (without). */
function startServer(): Promise<Server> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const [, mode, ...rest] = url.pathname.split('/');
    const path = rest.join('/');
    if (mode !== 'iso' && mode !== 'plain') return void response.writeHead(404).end();
    if (mode === 'iso') {
      response.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
      response.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
    }
    let body: Buffer | string;
    if (path === 'smoke.html') body = PAGE;
    else if (path === 'vocab.txt') body = readFileSync(vocabPath);
    else {
      const file = normalize(join(distDir, path));
      if (!file.startsWith(distDir) || !existsSync(file)) return void response.writeHead(404).end();
      body = readFileSync(file);
    }
    response.writeHead(200, { 'Content-Type': MIME[extname(path)] ?? 'application/octet-stream' }).end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe.skipIf(missing !== null)('core in headless Chromium', () => {
  let server: Server;
  let context: BrowserContext;
  let userDataDir: string;
  let origin: string;

  beforeAll(async () => {
    server = await startServer();
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    userDataDir = mkdtempSync(join(tmpdir(), 'tiankong-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await context?.close();
    server?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  async function run(mode: 'iso' | 'plain', variant: string) {
    const page = await context.newPage();
    try {
      await page.goto(`${origin}/${mode}/smoke.html?variant=${variant}`);
      await page.waitForFunction(() => (window as { __result?: unknown }).__result !== undefined, null, { timeout: 60_000 });
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
    expect(result).toMatchObject({ variant: 'threads', isolated: true, warnings: [], info: { threads: true, simd: true } });
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
    expect(result.warnings).toEqual([expect.stringMatching(/not cross-origin isolated.*Cross-Origin-Opener-Policy: same-origin.*Cross-Origin-Embedder-Policy: require-corp/)]);
  });
});
