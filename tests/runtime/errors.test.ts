// Every TiankongError code, with the built package and the tiny model: bad input, bad options,
// bad or tampered model directories, HTTP loading (progress, 404, HTML fallback, integrity),
// disposal and cancellation.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillMaskModel, LoadProgress, TiankongErrorCode } from '../../web/src/index.js';
import { api, missingPrerequisite, testModelDir } from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

async function expectCode(promise: Promise<unknown>, code: TiankongErrorCode, message?: RegExp) {
  const { TiankongError } = await api();
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, `expected a rejection with ${code}`).toBeInstanceOf(TiankongError);
  expect((error as InstanceType<typeof TiankongError>).code, (error as Error).message).toBe(code);
  if (message) expect((error as Error).message).toMatch(message);
  return error as InstanceType<typeof TiankongError>;
}

const sha256 = async (bytes: Uint8Array) =>
  Buffer.from(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)).toString('hex');

describe.skipIf(missing !== null)('TiankongError codes', () => {
  let modelDir: string;
  let tk: FillMaskModel;
  let work: string;
  let createFillMask: Awaited<ReturnType<typeof api>>['createFillMask'];

  /** A copy of the test model in which `edit` may change files; the manifest is re-hashed unless `keepManifest`. */
  async function variant(name: string, edit: (dir: string) => void, keepManifest = false): Promise<string> {
    const dir = join(work, name);
    rmSync(dir, { recursive: true, force: true });
    for (const file of ['model.json', 'model.onnx', 'vocab.txt']) {
      (await import('node:fs')).mkdirSync(dir, { recursive: true });
      copyFileSync(join(modelDir, file), join(dir, file));
    }
    edit(dir);
    if (!keepManifest) {
      const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
      for (const file of ['model.onnx', 'vocab.txt']) {
        const bytes = new Uint8Array(readFileSync(join(dir, file)));
        manifest.files[file] = { sha256: await sha256(bytes), bytes: bytes.byteLength };
      }
      writeFileSync(join(dir, 'model.json'), JSON.stringify(manifest));
    }
    return dir;
  }

  beforeAll(async () => {
    modelDir = testModelDir();
    work = mkdtempSync(join(tmpdir(), 'tiankong-errors-'));
    ({ createFillMask } = await api());
    tk = await createFillMask({ model: modelDir, backend: 'wasm' });
  });
  afterAll(async () => {
    await tk?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  test('EMPTY_INPUT, NO_MASK, TOO_LONG', async () => {
    await expectCode(tk.fill(''), 'EMPTY_INPUT', /empty/);
    await expectCode(tk.fill(' \n\t'), 'EMPTY_INPUT');
    await expectCode(tk.fill('春眠不觉晓'), 'NO_MASK', /\[MASK\]/);
    await expectCode(tk.fill('春'.repeat(200) + '[MASK]'), 'TOO_LONG', /201 tokens long.*at most 126/);
    await expect(tk.fill('春'.repeat(125) + '[MASK]')).resolves.toBeTruthy(); // exactly the limit
  });

  test('BAD_OPTION names the option', async () => {
    await expectCode(tk.fill('[MASK]', { topK: 0 }), 'BAD_OPTION', /topK/);
    await expectCode(tk.fill('[MASK]', { topK: 1.5 }), 'BAD_OPTION', /topK/);
    await expectCode(tk.fill('[MASK]', { threshold: 2 }), 'BAD_OPTION', /threshold/);
    await expectCode(tk.fill('[MASK]', { filter: 'latin' as 'chinese' }), 'BAD_OPTION', /filter/);
    await expectCode(tk.fill('[MASK]', { filter: { allow: ['春', '不存在的词'] } }), 'BAD_OPTION', /不存在的词/);
    await expectCode(tk.fill(42 as unknown as string), 'BAD_OPTION', /string/);
    await expectCode(createFillMask({ model: modelDir, threads: 0 }), 'BAD_OPTION', /threads/);
  });

  test('fillBatch reports the index of the bad text and runs nothing', async () => {
    const runs = tk.stats().runs;
    const error = await expectCode(tk.fillBatch(['春[MASK]', '秋天', '[MASK]']), 'NO_MASK', /texts\[1\]/);
    expect(error.index).toBe(1);
    expect(tk.stats().runs).toBe(runs);
  });

  test('BAD_MODEL: missing directory, missing file, full-logits export, vocab mismatch, broken onnx', async () => {
    await expectCode(createFillMask({ model: join(work, 'nope') }), 'BAD_MODEL', /does not exist/);
    await expectCode(
      createFillMask({ model: await variant('no-vocab', (d) => rmSync(join(d, 'vocab.txt')), true) }),
      'BAD_MODEL',
      /vocab\.txt/,
    );
    const fullLogits = join(modelDir, '..', 'full-logits');
    await expectCode(createFillMask({ model: fullLogits }), 'BAD_MODEL', /mask-only/);
    const shortVocab = await variant('short-vocab', (d) => {
      const lines = readFileSync(join(d, 'vocab.txt'), 'utf8').split('\n');
      writeFileSync(join(d, 'vocab.txt'), lines.slice(0, 1000).join('\n') + '\n');
    });
    await expectCode(createFillMask({ model: shortVocab }), 'BAD_MODEL', /1000 tokens.*1626/);
    const brokenOnnx = await variant('broken-onnx', (d) => writeFileSync(join(d, 'model.onnx'), 'not a protobuf'));
    await expectCode(
      createFillMask({ model: brokenOnnx, backend: 'wasm' }),
      'BAD_MODEL',
      /model\.onnx cannot be loaded/,
    );
    const badManifest = await variant(
      'bad-manifest',
      (d) => writeFileSync(join(d, 'model.json'), '{"format":"other"}'),
      true,
    );
    await expectCode(createFillMask({ model: badManifest }), 'BAD_MODEL', /tiankong-model\/1/);
  });

  test('INTEGRITY: a tampered file (directory and bytes)', async () => {
    const tampered = await variant(
      'tampered',
      (d) => {
        const bytes = readFileSync(join(d, 'model.onnx'));
        bytes[bytes.length - 1] ^= 1;
        writeFileSync(join(d, 'model.onnx'), bytes);
      },
      true,
    );
    await expectCode(createFillMask({ model: tampered }), 'INTEGRITY', /sha256/);
    const manifest = JSON.parse(readFileSync(join(modelDir, 'model.json'), 'utf8'));
    const vocabBytes = readFileSync(join(modelDir, 'vocab.txt'));
    await expectCode(
      createFillMask({ model: { manifest, vocabBytes, modelBytes: new Uint8Array(10) } }),
      'INTEGRITY',
      /10 bytes/,
    );
    const fromBytes = await createFillMask({
      model: { manifest, vocabBytes, modelBytes: readFileSync(join(modelDir, 'model.onnx')) },
    });
    expect((await fromBytes.fill('[MASK]')).masks).toHaveLength(1);
    await fromBytes.dispose();
  });

  test('DISPOSED: requests not yet running when dispose() is called, and every later one', async () => {
    const own = await createFillMask({ model: modelDir, backend: 'wasm' });
    const pending = [own.fill('春[MASK]'), own.fill('秋[MASK]')].map((p) =>
      expectCode(p, 'DISPOSED', /createFillMask/),
    );
    await own.dispose();
    await Promise.all(pending);
    await expectCode(own.fill('[MASK]'), 'DISPOSED');
    await own.dispose(); // idempotent
    expect(own.stats().backend).toBe('wasm'); // last snapshot stays readable
  });

  test('ABORTED: a request superseded before it runs', async () => {
    const controller = new AbortController();
    const first = tk.fill('春天[MASK]了', { topK: 7 });
    const second = expectCode(tk.fill('秋天[MASK]了', { topK: 7, signal: controller.signal }), 'ABORTED', /cancelled/);
    controller.abort();
    await expect(first).resolves.toBeTruthy();
    await second;
    await expectCode(tk.fill('[MASK]', { signal: AbortSignal.abort() }), 'ABORTED');
    await expectCode(createFillMask({ model: modelDir, signal: AbortSignal.abort() }), 'ABORTED');
  });

  test('every rejection of a bad argument is a TiankongError (BAD_OPTION) saying what was given', async () => {
    // A string where the options object belongs is not silently ignored (it used to load the default model).
    await expectCode(
      createFillMask(modelDir as never),
      'BAD_OPTION',
      /takes an options object, got ".*" \(a string\).*createFillMask\(\{ model: /,
    );
    await expectCode(createFillMask(new URL('file:///x/') as never), 'BAD_OPTION', /options object/);
    await expectCode(createFillMask(null as never), 'BAD_OPTION', /options must be an object, got null/);
    await expectCode(createFillMask({ model: 5 as never }), 'BAD_OPTION', /model must be .* got 5/);
    await expectCode(createFillMask({ model: '' }), 'BAD_OPTION', /empty string/);
    await expectCode(
      createFillMask({ model: modelDir, cache: { maxEntries: 2 ** 32 } }),
      'BAD_OPTION',
      /cache\.maxEntries .* got 4294967296/,
    );
    await expectCode(createFillMask({ model: modelDir, cache: 'x' as never }), 'BAD_OPTION', /cache must be an object/);
    await expectCode(
      createFillMask({ model: modelDir, cache: { entries: 5 } as never }),
      'BAD_OPTION',
      /cache takes maxEntries and maxBytes, got "entries"/,
    );
    await expectCode(
      createFillMask({ model: modelDir, onProgress: 'x' as never }),
      'BAD_OPTION',
      /onProgress must be a function, got "x"/,
    );
    await expectCode(
      createFillMask({ model: modelDir, signal: 'x' as never }),
      'BAD_OPTION',
      /signal must be an AbortSignal/,
    );
    await expectCode(createFillMask({ model: modelDir, threads: 1.5 }), 'BAD_OPTION', /threads .* got 1\.5/);
    await expectCode(
      createFillMask({ model: modelDir, backend: 'gpu' as never }),
      'BAD_OPTION',
      /backend .* got "gpu" \(a string\)/,
    );
    await expectCode(tk.fill('[MASK]', { signal: 'x' as never }), 'BAD_OPTION', /signal must be an AbortSignal/);
    await expectCode(
      tk.fill('[MASK]', { signal: {} as never }),
      'BAD_OPTION',
      /signal must be an AbortSignal .*, got an object/,
    );
    await expectCode(tk.explain('[MASK]', 0, '春', { signal: 5 as never }), 'BAD_OPTION', /signal/);
    await expectCode(tk.fillBatch(['[MASK]'], { signal: 'x' as never }), 'BAD_OPTION', /signal/);
    // The value as given, not as a template literal prints it ("got 5" for the string '5').
    await expectCode(tk.fill('[MASK]', { topK: '5' as never }), 'BAD_OPTION', /topK .* got "5" \(a string\)/);
    await expectCode(
      tk.fill('[MASK]', { threshold: '0.5' as never }),
      'BAD_OPTION',
      /threshold .* got "0\.5" \(a string\)/,
    );
    await expectCode(
      tk.fill('[MASK]', { memory: 'no' as never }),
      'BAD_OPTION',
      /memory must be true or false, got "no"/,
    );
    await expectCode(tk.fill('[MASK]', [] as never), 'BAD_OPTION', /options must be an object, got an array/);
    await expectCode(tk.fillBatch('春[MASK]' as never), 'BAD_OPTION', /array of strings, got "春\[MASK\]"/);
  });

  test('fillBatch: holes and non-strings carry their index; bad options have none; nothing runs', async () => {
    const runs = tk.stats().runs;
    const hole = await expectCode(
      // eslint-disable-next-line no-sparse-arrays -- a hole, not undefined, is the case under test
      tk.fillBatch(['春[MASK]', , '秋[MASK]'] as string[]),
      'BAD_OPTION',
      /texts\[1\]: text must be a string, got undefined/,
    );
    expect(hole.index).toBe(1);
    const number = await expectCode(
      tk.fillBatch(['春[MASK]', '秋[MASK]', 7 as never]),
      'BAD_OPTION',
      /texts\[2\]: .*got 7/,
    );
    expect(number.index).toBe(2);
    const option = await expectCode(
      tk.fillBatch(['春[MASK]', 7 as never], { topK: 0 }),
      'BAD_OPTION',
      /^tiankong: topK/,
    );
    expect(option.index).toBeUndefined();
    expect(tk.stats().runs).toBe(runs);
  });

  test('joint words respect threshold, like the mask lists', async () => {
    const text = '[MASK][MASK]天';
    const all = await tk.fill(text, { joint: true, beam: 8, topK: 8 });
    const scores = all.words![0]!.candidates.map((c) => c.score);
    expect(scores.length).toBeGreaterThan(2);
    const threshold = (scores[0]! + scores[1]!) / 2; // keeps exactly the best word
    const kept = await tk.fill(text, { joint: true, beam: 8, topK: 8, threshold });
    expect(kept.words![0]!.candidates).toEqual([all.words![0]!.candidates[0]]);
    for (const mask of kept.masks) expect(mask.candidates.every((c) => c.score >= threshold)).toBe(true);
    const none = await tk.fill(text, { joint: true, beam: 8, threshold: 1 });
    expect(none.words![0]!.candidates).toEqual([]);
  });

  test('model.json: files entries (bytes, sha256) and max_length are checked at load with specific messages', async () => {
    const edit = (name: string, change: (manifest: any) => void) =>
      variant(
        name,
        (d) => {
          const manifest = JSON.parse(readFileSync(join(d, 'model.json'), 'utf8'));
          change(manifest);
          writeFileSync(join(d, 'model.json'), JSON.stringify(manifest));
        },
        true,
      );
    for (const bytes of [-1, 0, 2 ** 40, 1.5, '278378']) {
      const dir = await edit(`bytes-${bytes}`, (m) => {
        m.files['model.onnx'].bytes = bytes;
      });
      await expectCode(
        createFillMask({ model: dir }),
        'BAD_MODEL',
        /files\["model\.onnx"\]\.bytes must be the file's size, an integer from 1 to 2147483647, got/,
      );
      const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
      await expectCode(
        createFillMask({ model: { manifest, modelBytes: new Uint8Array(4), vocabBytes: new Uint8Array(4) } }),
        'BAD_MODEL',
        /bytes must be/,
      );
    }
    const short = await edit('short-sha', (m) => {
      m.files['vocab.txt'].sha256 = 'abc';
    });
    await expectCode(
      createFillMask({ model: short }),
      'BAD_MODEL',
      /files\["vocab\.txt"\]\.sha256 must be the file's SHA-256 as 64 hex digits, got "abc"/,
    );
    const absent = await edit('no-entry', (m) => {
      delete m.files['vocab.txt'];
    });
    await expectCode(createFillMask({ model: absent }), 'BAD_MODEL', /files\["vocab\.txt"\] is missing/);
    // Upper-case hex is the same digest: accepted.
    const upper = await edit('upper-sha', (m) => {
      m.files['model.onnx'].sha256 = m.files['model.onnx'].sha256.toUpperCase();
    });
    const loaded = await createFillMask({ model: upper, backend: 'wasm' });
    expect((await loaded.fill('[MASK]天')).masks).toHaveLength(1);
    await loaded.dispose();
    // The tiny graph's position table has 128 rows: a longer max_length is refused at load, before
    // ONNX Runtime sees a too-long input (it used to load and fail at the first long text).
    const long = await edit('long-max-length', (m) => {
      m.max_length = 512;
    });
    await expectCode(
      createFillMask({ model: long, backend: 'wasm' }),
      'BAD_MODEL',
      /max_length 512 is longer than model\.onnx can read \(its position table has 128 positions\)/,
    );
    await expectCode(createFillMask({ model: long, backend: 'auto' }), 'BAD_MODEL', /max_length 512/);
    const huge = await edit('huge-max-length', (m) => {
      m.max_length = 2 ** 40;
    });
    await expectCode(createFillMask({ model: huge }), 'BAD_MODEL', /max_length must be an integer from 8 to/);
  });

  test('a vocab.txt saved with a UTF-8 BOM loads (the BOM is not part of [PAD])', async () => {
    const dir = await variant('vocab-bom', (d) => {
      writeFileSync(
        join(d, 'vocab.txt'),
        Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(join(d, 'vocab.txt'))]),
      );
    });
    const bom = await createFillMask({ model: dir, backend: 'wasm' });
    expect((await bom.fill('春眠不觉晓，处处闻[MASK]鸟。', { topK: 3 })).masks).toEqual(
      (await tk.fill('春眠不觉晓，处处闻[MASK]鸟。', { topK: 3 })).masks,
    );
    await bom.dispose();
  });

  test('UNSUPPORTED: a model URL scheme Node cannot load', async () => {
    await expectCode(createFillMask({ model: 'ftp://example.com/model/' }), 'UNSUPPORTED', /ftp:/);
  });

  describe('over HTTP', () => {
    let server: Server;
    let origin: string;
    let tampered: string;
    beforeAll(async () => {
      tampered = await variant(
        'http-tampered',
        (d) => writeFileSync(join(d, 'model.onnx'), Buffer.alloc(readFileSync(join(d, 'model.onnx')).length)),
        true,
      );
      server = createServer((request, response) => {
        const path = new URL(request.url!, 'http://x').pathname;
        const [, area, file] = path.split('/');
        if (area === 'spa')
          return void response.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>app</title>');
        const dir = area === 'model' ? modelDir : area === 'tampered' ? tampered : null;
        let body: Buffer;
        try {
          body = readFileSync(join(dir!, file!));
        } catch {
          return void response.writeHead(404).end();
        }
        // Chunked, so progress has several steps.
        response.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        for (let i = 0; i < body.length; i += 65536) response.write(body.subarray(i, i + 65536));
        response.end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => server?.close());

    test('downloads with progress and fills', async () => {
      const events: LoadProgress[] = [];
      const remote = await createFillMask({
        model: `${origin}/model/`,
        backend: 'wasm',
        onProgress: (p) => events.push(p),
      });
      const onnx = events.filter((e) => e.file === 'model.onnx');
      expect(onnx.length).toBeGreaterThan(1);
      expect(
        onnx.every((e) => e.source === 'network' && e.total === readFileSync(join(modelDir, 'model.onnx')).length),
      ).toBe(true);
      expect(onnx.at(-1)!.loaded).toBe(onnx.at(-1)!.total);
      expect(onnx.map((e) => e.loaded)).toEqual([...onnx.map((e) => e.loaded)].sort((a, b) => a - b));
      expect((await remote.fill('[MASK]天')).masks[0]!.candidates).toHaveLength(5);
      expect(remote.stats().model.source).toBe(`${origin}/model/`);
      await remote.dispose();
    });

    test('NETWORK (404, connection refused), BAD_MODEL (HTML fallback), INTEGRITY', async () => {
      await expectCode(
        createFillMask({ model: `${origin}/missing/` }),
        'NETWORK',
        /404.*directory that holds model\.json/,
      );
      await expectCode(createFillMask({ model: 'http://127.0.0.1:9/model/' }), 'NETWORK', /could not download/);
      await expectCode(createFillMask({ model: `${origin}/spa/` }), 'BAD_MODEL', /HTML page/);
      await expectCode(createFillMask({ model: `${origin}/tampered/` }), 'INTEGRITY', /sha256/);
    });
  });
});
