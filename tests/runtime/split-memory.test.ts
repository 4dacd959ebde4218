// A split corpus memory (scripts/build-memory --split: memory.bin + memory-ngrams.bin) in the
// built package: the two parts answer exactly as the whole file; `onPreview` hands over a preview
// that answers from memory.bin alone before the model's files are read, marks its results, and is
// answered by the model once it is ready; parts that do not belong together are refused naming
// both files. The whole memory of the same build is the reference (the C++ suite checks both
// against an exact n-gram reference: wasm/src/memory_test.cc).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillMaskModel, FillMaskPreview, FillResult, LoadProgress, ReadingsResult } from '../../web/src/index.js';
import { api, missingPrerequisite, rejection, repoRoot, testMemoryModelDir } from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const TOOL = join(repoRoot, 'build', 'native', 'wasm', 'tiankong_build_memory');
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const TEXTS = ['床前明月光，疑是地[MASK]霜。', '举头望[MASK]月，低头思故乡。', '天[MASK]人，[MASK]水', '[MASK]'];

/** A copy of `from` whose memory is split in two (the native tool's --split), listed in model.json. */
function splitCopy(from: string, to: string): string {
  cpSync(from, to, { recursive: true });
  const whole = join(from, 'memory.bin');
  execFileSync(
    TOOL,
    ['--split', whole, '--out', join(to, 'memory.bin'), '--ngrams-out', join(to, 'memory-ngrams.bin')],
    {
      stdio: 'pipe',
    },
  );
  relist(to);
  return to;
}

/** Re-hashes both memory files into model.json and names the second part. */
function relist(dir: string): void {
  const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
  for (const file of ['memory.bin', 'memory-ngrams.bin']) {
    const bytes = new Uint8Array(readFileSync(join(dir, file)));
    manifest.files[file] = { sha256: sha256(bytes), bytes: bytes.byteLength };
  }
  manifest.memory.ngrams = 'memory-ngrams.bin';
  writeFileSync(join(dir, 'model.json'), JSON.stringify(manifest));
}

const candidates = (result: FillResult) =>
  result.masks.map((m) => m.candidates.map((c) => [c.token, c.score, c.source?.title ?? null]));

describe.skipIf(missing !== null)('a split corpus memory', () => {
  let work: string;
  let split: string;
  let whole: FillMaskModel;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tiankong-split-memory-'));
    split = splitCopy(testMemoryModelDir(), join(work, 'split'));
    const { createFillMask } = await api();
    whole = await createFillMask({ model: testMemoryModelDir(), backend: 'wasm', threads: 1 });
  });
  afterAll(async () => {
    await whole?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('memory.bin + memory-ngrams.bin answer exactly as the whole memory.bin', async () => {
    const { createFillMask } = await api();
    const tk = await createFillMask({ model: split, backend: 'wasm', threads: 1 });
    try {
      expect(tk.stats().memory!.maxOrder).toBe(whole.stats().memory!.maxOrder);
      expect(tk.stats().memory!.maxOrder).toBeGreaterThan(2);
      expect(tk.stats().memory!.ngrams).toBe(whole.stats().memory!.ngrams);
      for (const text of TEXTS) {
        expect(candidates(await tk.fill(text, { topK: 8 })), text).toEqual(
          candidates(await whole.fill(text, { topK: 8 })),
        );
      }
    } finally {
      await tk.dispose();
    }
  });

  test('onPreview: answers from memory.bin before the model is read, marked preview; then the model answers', async () => {
    const { createFillMask } = await api();
    const read: string[] = [];
    let readBeforePreview: string[] | null = null;
    let preview: FillMaskPreview | null = null;
    let previewResult: Promise<FillResult> | null = null;
    let previewReadings: Promise<ReadingsResult> | null = null;
    const tk = await createFillMask({
      model: split,
      backend: 'wasm',
      threads: 1,
      onProgress: (p: LoadProgress) => {
        if (!read.includes(p.file)) read.push(p.file);
      },
      onPreview: (ready) => {
        readBeforePreview = [...read];
        preview = ready;
        previewResult = ready.fill('床前明月光，疑是地[MASK]霜。', { topK: 3 });
        previewReadings = ready.readings('春风又绿江南岸');
      },
    });
    try {
      expect(readBeforePreview).toEqual(['model.json', 'vocab.txt', 'memory.bin']);
      expect(read).toEqual(expect.arrayContaining(['model.onnx', 'memory-ngrams.bin']));
      const first = await previewResult!;
      expect(first.preview).toBe(true);
      expect(first.masks[0]!.candidates[0]).toMatchObject({ token: '上', source: { title: '静夜思' } });
      // Readings need no model: the preview's are the model's.
      expect(await previewReadings!).toEqual(await tk.readings('春风又绿江南岸'));
      const sum = first.masks[0]!.candidates.reduce((s, c) => s + c.score, 0) + first.masks[0]!.other;
      expect(sum).toBeCloseTo(1, 4);
      // Once the model is ready, the preview's fills are the model's.
      const later = await preview!.fill('床前明月光，疑是地[MASK]霜。', { topK: 3 });
      expect(later.preview).toBeUndefined();
      expect(candidates(later)).toEqual(candidates(await whole.fill('床前明月光，疑是地[MASK]霜。', { topK: 3 })));
    } finally {
      await tk.dispose();
    }
    expect((await rejection(preview!.fill('[MASK]'))).code).toBe('DISPOSED');
  });

  test('no preview without a split memory, or with memory: false', async () => {
    const { createFillMask } = await api();
    let called = 0;
    for (const options of [{ model: testMemoryModelDir() }, { model: split, memory: false }]) {
      const tk = await createFillMask({ ...options, backend: 'wasm', threads: 1, onPreview: () => void called++ });
      await tk.dispose();
    }
    expect(called).toBe(0);
  });

  test('an onPreview that throws or is not a function fails createFillMask with BAD_OPTION', async () => {
    const { createFillMask } = await api();
    const thrown = await rejection(
      createFillMask({
        model: split,
        backend: 'wasm',
        threads: 1,
        onPreview: () => {
          throw new Error('boom');
        },
      }),
    );
    expect(thrown).toMatchObject({
      code: 'BAD_OPTION',
      message: expect.stringContaining('onPreview callback threw: boom'),
    });
    const notFunction = await rejection(createFillMask({ model: split, onPreview: 'yes' as never }));
    expect(notFunction).toMatchObject({
      code: 'BAD_OPTION',
      message: expect.stringContaining('onPreview must be a function'),
    });
  });

  test('parts of different builds, or a damaged part, are refused naming the files', async () => {
    const { createFillMask } = await api();
    // The n-gram part of a memory built with other options (another build: its build info differs).
    const other = join(work, 'other');
    cpSync(testMemoryModelDir(), other, { recursive: true });
    const fixtures = join(repoRoot, 'tests', 'fixtures', 'data', 'corpus');
    writeFileSync(join(work, 'corpus.txt'), readFileSync(join(fixtures, 'poetry.txt'))); // less than the test model's
    execFileSync(
      join(repoRoot, 'scripts', 'build-memory'),
      [other, '--corpus', join(work, 'corpus.txt'), '--words', 'none', '--collocations', 'none', '--split'],
      {
        stdio: 'pipe',
        env: { ...process.env, TIANKONG_DATA: join(repoRoot, 'tests', 'fixtures', 'data') },
        input: '',
      },
    );
    const mixed = join(work, 'mixed');
    cpSync(split, mixed, { recursive: true });
    cpSync(join(other, 'memory-ngrams.bin'), join(mixed, 'memory-ngrams.bin'));
    relist(mixed);
    const mismatch = await rejection(createFillMask({ model: mixed, backend: 'wasm', threads: 1 }));
    expect(mismatch.code).toBe('BAD_MODEL');
    expect(mismatch.message).toContain('memory.bin + memory-ngrams.bin');
    expect(mismatch.message).toContain('different builds');
    // A damaged part that model.json still vouches for: INTEGRITY, naming it.
    const damaged = join(work, 'damaged');
    cpSync(split, damaged, { recursive: true });
    const bytes = new Uint8Array(readFileSync(join(damaged, 'memory-ngrams.bin')));
    bytes[bytes.length >> 1] ^= 0x40;
    writeFileSync(join(damaged, 'memory-ngrams.bin'), bytes);
    const integrity = await rejection(createFillMask({ model: damaged, backend: 'wasm', threads: 1 }));
    expect(integrity.code).toBe('INTEGRITY');
    expect(integrity.message).toContain('memory-ngrams.bin');
  });
});
