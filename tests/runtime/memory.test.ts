// The corpus memory in the built package: fused fills with sources (出处), memory: false, joint
// words, and every kind of bad memory.bin (truncated, corrupt, foreign, wrong version, wrong
// vocabulary, missing) reported as INTEGRITY / BAD_MODEL naming the file, with the model still
// usable without it. The tiny test model is random, so what it proposes comes from the memory
// built from tests/fixtures/data (static facts of those texts, not of the code under test).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillMaskModel } from '../../web/src/index.js';
import {
  Reference,
  api,
  bertVocabMemoryModelDir,
  cliPath,
  missingPrerequisite,
  rejection,
  repoRoot,
  testMemoryModelDir,
} from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A copy of the memory model whose memory.bin is replaced by `bytes` (manifest re-hashed unless `keepHash`). */
function withMemory(work: string, name: string, bytes: Uint8Array, keepHash = false): string {
  const dir = join(work, name);
  cpSync(testMemoryModelDir(), dir, { recursive: true });
  writeFileSync(join(dir, 'memory.bin'), bytes);
  if (!keepHash) {
    const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
    manifest.files['memory.bin'] = { sha256: sha256(bytes), bytes: bytes.byteLength };
    writeFileSync(join(dir, 'model.json'), JSON.stringify(manifest));
  }
  return dir;
}

/** memory.bin with a header field changed and the header checksum made valid again. */
function patchedHeader(original: Uint8Array, patch: (view: DataView) => void): Uint8Array {
  const bytes = original.slice();
  const view = new DataView(bytes.buffer);
  patch(view);
  const sections = view.getUint32(12, true);
  const header = Buffer.concat([bytes.subarray(0, 36), bytes.subarray(40, 40 + 24 * sections)]);
  view.setUint32(36, crc32(header), true);
  return bytes;
}

describe.skipIf(missing !== null)('the corpus memory', () => {
  let tk: FillMaskModel;
  let work: string;
  let original: Uint8Array;

  beforeAll(async () => {
    const { createFillMask } = await api();
    tk = await createFillMask({ model: testMemoryModelDir(), backend: 'wasm', threads: 1 });
    work = mkdtempSync(join(tmpdir(), 'tiankong-memory-'));
    original = new Uint8Array(readFileSync(join(testMemoryModelDir(), 'memory.bin')));
  });
  afterAll(async () => {
    await tk?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('a famous line is completed, with its source; the distribution still sums to 1', async () => {
    const result = await tk.fill('床前明月光，疑是地[MASK]霜。', { topK: 5 });
    const [mask] = result.masks;
    expect(mask!.candidates[0]).toMatchObject({
      token: '上',
      sequence: '床前明月光，疑是地上霜。',
      source: { work: '千家诗', title: '静夜思', author: '李白', text: '床前明月光，疑是地上霜。' },
    });
    const total = mask!.candidates.reduce((sum, c) => sum + c.score, 0) + mask!.other;
    expect(total).toBeCloseTo(1, 5);
    expect(tk.stats().memory).toMatchObject({ maxOrder: 5 });
    expect(tk.stats().memory!.texts).toBeGreaterThan(400);
  });

  test('an idiom is completed with 成语 as its source; two adjacent blanks too, per mask and jointly', async () => {
    const idiom = await tk.fill('半途而[MASK]');
    expect(idiom.masks[0]!.candidates[0]).toMatchObject({
      token: '废',
      source: { work: '成语', title: '半途而废', text: '半途而废' },
    });
    const two = await tk.fill('画[MASK][MASK]睛', { joint: true });
    expect(two.masks.map((m) => m.candidates[0]!.token)).toEqual(['龙', '点']);
    expect(two.words![0]!.candidates[0]).toMatchObject({ text: '龙点', sequence: '画龙点睛' });
  });

  test("an idiom's candidate reads as the idiom dictionary has it, per mask and in joint words", async () => {
    // The fixture dictionary's own reading of 对牛弹琴 (read here, not through the runtime).
    const row = readFileSync(join(repoRoot, 'tests/fixtures/data/idioms/idioms.csv'), 'utf8')
      .split('\n')
      .find((line) => line.startsWith('"对牛弹琴",'))!;
    const pinyin = /^"[^"]+","([^"]+)"/.exec(row)![1]!;
    const syllables = pinyin.split(' ');
    expect(syllables[2]).toBe('tán');
    // Alone, 弹 reads dàn first (Unihan's counts): the idiom is what makes it tán.
    expect((await tk.readings('弹')).chars[0]!.pinyin[0]).not.toBe('tán');
    const one = await tk.fill('对牛[MASK]琴');
    const candidate = one.masks[0]!.candidates.find((c) => c.token === '弹')!;
    expect(candidate.source).toMatchObject({ work: '成语', title: '对牛弹琴', pinyin });
    expect(candidate.pinyin[0]).toBe('tán');
    expect(new Set(candidate.pinyin).size).toBe(candidate.pinyin.length); // moved, not repeated
    const two = await tk.fill('对[MASK][MASK]琴', { joint: true });
    const word = two.words![0]!.candidates.find((w) => w.text === '牛弹')!;
    expect(word.pinyin).toEqual(syllables.slice(1, 3));
    // A famous line has no dictionary reading: no pinyin on its source.
    const line = await tk.fill('床前明月光，疑是地[MASK]霜。');
    expect(line.masks[0]!.candidates[0]!.source).not.toHaveProperty('pinyin');
  });

  test('memory: false is the model alone (the reference pipeline), with no sources', async () => {
    const ref = await Reference.create(testMemoryModelDir(), 'web', 1);
    const text = '床前明月光，疑是地[MASK]霜。';
    const alone = await tk.fill(text, { topK: 5, memory: false });
    const [row] = await ref.probabilities(text);
    expect(alone.masks[0]!.candidates.map((c) => c.token)).toEqual(ref.topK(row!, 5).map((c) => c.token));
    expect(alone.masks[0]!.candidates.every((c) => c.source === undefined)).toBe(true);
    const other = '举头望明月，低头思故[MASK]。';
    expect((await tk.fill(other, { memory: false })).cached).toBe(false);
    expect((await tk.fill(other)).cached).toBe(false); // memory on and off are cached apart
    expect((await tk.fill(other, { memory: false })).cached).toBe(true);
    await expect(tk.fill(text, { memory: 'no' as unknown as boolean })).rejects.toMatchObject({ code: 'BAD_OPTION' });
  });

  test("a fusion floor mixes the model's own distribution into the shown one; a bad floor is BAD_MODEL", async () => {
    const { createFillMask } = await api();
    const withFloor = (name: string, floor: unknown) => {
      const dir = join(work, name);
      cpSync(testMemoryModelDir(), dir, { recursive: true });
      const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
      manifest.memory.fusion = { ...manifest.memory.fusion, floor };
      writeFileSync(join(dir, 'model.json'), JSON.stringify(manifest));
      return dir;
    };
    const floored = await createFillMask({ model: withFloor('floor', 0.25), backend: 'wasm', threads: 1 });
    try {
      const ref = await Reference.create(testMemoryModelDir(), 'web', 1);
      const text = '床前明月光，疑是地[MASK]霜。';
      const [plain, mixed, [modelRow]] = await Promise.all([
        tk.fill(text, { topK: 400 }),
        floored.fill(text, { topK: 5 }),
        ref.probabilities(text),
      ]);
      const fused = new Map(plain.masks[0]!.candidates.map((c) => [c.token, c.score]));
      expect(mixed.masks[0]!.candidates[0]!.token).toBe('上');
      // Each candidate shown: 0.75 of its plain fused probability + 0.25 of the model's own.
      for (const c of mixed.masks[0]!.candidates) {
        expect(fused.has(c.token)).toBe(true);
        const expected = 0.75 * fused.get(c.token)! + 0.25 * modelRow![ref.tokenId(c.token)]!;
        expect(c.score).toBeCloseTo(expected, 5);
      }
      expect(plain.masks[0]!.candidates[0]!.score).toBeGreaterThan(0.99);
      expect(mixed.masks[0]!.candidates[0]!.score).toBeLessThan(0.76);
    } finally {
      await floored.dispose();
    }
    expect(await rejection(createFillMask({ model: withFloor('bad-floor', 0.7) }))).toMatchObject({
      code: 'BAD_MODEL',
      message: expect.stringContaining('memory.fusion.floor must be a number from 0 to 0.5'),
    });
  });

  test('a bad memory.bin is INTEGRITY or BAD_MODEL naming it; memory: false still loads the model', async () => {
    const { createFillMask } = await api();
    const truncated = withMemory(work, 'truncated', original.subarray(0, original.length - 100), true);
    expect(await rejection(createFillMask({ model: truncated }))).toMatchObject({
      code: 'INTEGRITY',
      message: expect.stringMatching(/memory\.bin/),
    });
    const cases: [string, Uint8Array, RegExp][] = [
      ['short', original.subarray(0, 1000), /memory\.bin.*truncated|memory\.bin.*header says/],
      [
        'flipped',
        (() => {
          const b = original.slice();
          b[b.length - 50]! ^= 0xff;
          return b;
        })(),
        /memory\.bin.*checksum/,
      ],
      ['foreign', new TextEncoder().encode('{"not": "a memory"}'.repeat(10)), /memory\.bin.*not a tiankong memory/],
      ['version', patchedHeader(original, (v) => v.setUint32(8, 99, true)), /memory\.bin.*version 99/],
      ['vocab', patchedHeader(original, (v) => v.setBigUint64(24, 12345n, true)), /memory\.bin.*another vocabulary/],
    ];
    for (const [name, bytes, message] of cases) {
      const dir = withMemory(work, name, bytes);
      const result = await rejection(createFillMask({ model: dir, backend: 'wasm' }));
      expect(result, name).toMatchObject({ code: 'BAD_MODEL' });
      expect(result.message, name).toMatch(message);
      expect(result.message, name).toMatch(/memory: false/);
      const without = await createFillMask({ model: dir, backend: 'wasm', memory: false });
      expect((await without.fill('疑是地[MASK]霜')).masks[0]!.candidates.length).toBeGreaterThan(0);
      expect(without.stats().memory).toBeNull();
      await without.dispose();
    }
    const absent = withMemory(work, 'absent', original);
    rmSync(join(absent, 'memory.bin'));
    expect(await rejection(createFillMask({ model: absent }))).toMatchObject({
      code: 'BAD_MODEL',
      message: expect.stringMatching(/memory\.bin/),
    });
    const escape = withMemory(work, 'escape', original);
    const manifest = JSON.parse(readFileSync(join(escape, 'model.json'), 'utf8'));
    manifest.memory.file = '../with-memory/memory.bin';
    writeFileSync(join(escape, 'model.json'), JSON.stringify(manifest));
    expect(await rejection(createFillMask({ model: escape }))).toMatchObject({
      code: 'BAD_MODEL',
      message: expect.stringMatching(/not a file name inside the model directory/),
    });
    expect(
      await rejection(createFillMask({ model: testMemoryModelDir(), memory: 1 as unknown as boolean })),
    ).toMatchObject({
      code: 'BAD_OPTION',
    });
  });

  test('a model given as bytes carries its memory', async () => {
    const { createFillMask } = await api();
    const dir = testMemoryModelDir();
    const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
    const bytes = {
      manifest,
      modelBytes: readFileSync(join(dir, 'model.onnx')),
      vocabBytes: readFileSync(join(dir, 'vocab.txt')),
    };
    const withBytes = await createFillMask({ model: { ...bytes, memoryBytes: original }, backend: 'wasm' });
    expect((await withBytes.fill('疑是地[MASK]霜')).masks[0]!.candidates[0]!.token).toBe('上');
    await withBytes.dispose();
    const tampered = original.slice();
    tampered[100]! ^= 1;
    expect(await rejection(createFillMask({ model: { ...bytes, memoryBytes: tampered } }))).toMatchObject({
      code: 'INTEGRITY',
    });
  });

  test('any exported BERT gets a memory for its own vocabulary (bert-base-chinese: 21 128 tokens)', async () => {
    const { createFillMask } = await api();
    const dir = bertVocabMemoryModelDir();
    const bert = await createFillMask({ model: dir, backend: 'wasm' });
    expect(bert.stats().model.vocabSize).toBe(21128);
    const result = await bert.fill('床前明月光，疑是地[MASK]霜。');
    expect(result.masks[0]!.candidates[0]).toMatchObject({ token: '上', source: { title: '静夜思' } });
    await bert.dispose();
    // The tiny model's memory does not fit this vocabulary: a specific BAD_MODEL.
    const mixed = join(work, 'mixed');
    cpSync(dir, mixed, { recursive: true });
    writeFileSync(join(mixed, 'memory.bin'), original);
    const manifest = JSON.parse(readFileSync(join(mixed, 'model.json'), 'utf8'));
    manifest.files['memory.bin'] = { sha256: sha256(original), bytes: original.byteLength };
    writeFileSync(join(mixed, 'model.json'), JSON.stringify(manifest));
    expect(await rejection(createFillMask({ model: mixed }))).toMatchObject({
      code: 'BAD_MODEL',
      message: expect.stringMatching(/another vocabulary/),
    });
  });

  test('CLI: sources in the table and in --json; --no-memory', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [cliPath, 'fill', '--model', testMemoryModelDir(), ...args], {
        encoding: 'utf8',
        timeout: 60_000,
      });
    const table = run('--top-k', '2', '床前明月光，疑是地[MASK]霜。');
    expect(table.status).toBe(0);
    expect(table.stdout).toContain('出处: 李白《静夜思》（千家诗）：床前明月光，疑是地上霜。');
    const json = JSON.parse(run('--json', '疑是地[MASK]霜').stdout);
    expect(json.masks[0].candidates[0].source).toMatchObject({ title: '静夜思' });
    const alone = run('--no-memory', '--json', '疑是地[MASK]霜');
    expect(alone.status).toBe(0);
    expect(alone.stdout).not.toContain('source');
  });
});
