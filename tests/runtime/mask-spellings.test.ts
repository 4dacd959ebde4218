// 【MASK】 — what a Chinese keyboard types for "[MASK]" — is a mask in the runtime and the CLI,
// like every other forgiving spelling (the C++ tokenizer decides: wasm/src/special_tokens.cc):
// same candidates as the canonical [MASK], offsets on what the user typed.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, cliPath, missingPrerequisite, testModelDir } from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

describe.skipIf(missing !== null)('【MASK】 spelling', () => {
  let model: string;
  let tk: import('../../web/src/index.js').FillMaskModel;

  beforeAll(async () => {
    model = testModelDir();
    tk = await (await api()).createFillMask({ model, backend: 'wasm', threads: 1, memory: false });
  });
  afterAll(async () => {
    await tk?.dispose();
  });

  test("fill: 【MASK】, 【mask] and [MASK】 are masks with the canonical mask's candidates", async () => {
    const text = '床前明月光，疑是地【MASK】霜。举头望【mask]月，低头思[MASK】乡。';
    const result = await tk.fill(text, { topK: 3 });
    expect(result.masks.map((m) => text.slice(m.start, m.end))).toEqual(['【MASK】', '【mask]', '[MASK】']);
    const canonical = await tk.fill(text.replace(/[[【][Mm][Aa][Ss][Kk][\]】]/g, '[MASK]'), { topK: 3 });
    expect(result.masks.map((m) => m.candidates.map((c) => [c.token, c.score]))).toEqual(
      canonical.masks.map((m) => m.candidates.map((c) => [c.token, c.score])),
    );
    const first = result.masks[0]!.candidates[0]!;
    expect(first.sequence).toBe(`床前明月光，疑是地${first.token}霜。举头望【mask]月，低头思[MASK】乡。`);
  });

  test('CLI: tiankong fill reads 【MASK】', () => {
    const run = spawnSync(
      process.execPath,
      [cliPath, 'fill', '--json', '--no-memory', '--model', model, '春眠不觉晓，处处闻啼【MASK】。'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const masks = JSON.parse(run.stdout).masks as Array<{ start: number; end: number }>;
    expect(masks).toHaveLength(1);
    expect('春眠不觉晓，处处闻啼【MASK】。'.slice(masks[0]!.start, masks[0]!.end)).toBe('【MASK】');
  });
});
