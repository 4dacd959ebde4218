// The CLI as a user runs it (spawned node bin/tiankong.js): fill --json schema, exit code 2
// on bad lines while good lines still print, tokenize --json against HF tokenizers, and that
// the process exits promptly after its work (pthread workers and ORT are shut down).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { FillResult } from '../../web/src/index.js';
import { Reference, api, cliPath, missingPrerequisite, testModelDir } from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

function cli(args: string[], input?: string) {
  const started = Date.now();
  const result = spawnSync(process.execPath, [cliPath, ...args], { input, encoding: 'utf8', timeout: 60_000 });
  return { ...result, seconds: (Date.now() - started) / 1000 };
}

describe.skipIf(missing !== null)('tiankong CLI', () => {
  let model: string;
  beforeAll(() => {
    model = testModelDir();
  });

  test('fill --json prints fill() results, one object per input', () => {
    for (const backend of ['wasm', 'auto']) {
      const run = cli(['fill', '--json', '--model', model, '--backend', backend, '--top-k', '3', '春眠不觉晓，处处闻[MASK]鸟。', '[MASK]天[MASK]']);
      expect(run.status, run.stderr).toBe(0);
      expect(run.signal).toBeNull(); // exited by itself, not killed by the timeout
      const lines = run.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as FillResult);
      expect(lines).toHaveLength(2);
      expect(lines[1]!.masks).toHaveLength(2);
      for (const result of lines) {
        expect(Object.keys(result).sort()).toEqual(['cached', 'masks', 'other', 'text', 'timings']);
        expect(Object.keys(result.timings).sort()).toEqual(['decodeMs', 'inferenceMs', 'tokenizeMs', 'totalMs']);
        for (const mask of result.masks) {
          expect(Object.keys(mask).sort()).toEqual(['candidates', 'end', 'index', 'other', 'start']);
          expect(result.text.slice(mask.start, mask.end)).toBe('[MASK]');
          expect(mask.candidates).toHaveLength(3);
          for (const c of mask.candidates) expect(Object.keys(c).sort()).toEqual(['score', 'sequence', 'token']);
        }
      }
    }
  });

  test('stdin lines: bad lines → stderr + exit 2, good lines still printed', () => {
    const run = cli(['fill', '--json', '--model', model], '春[MASK]\n没有掩码\n\n秋[MASK]\n');
    expect(run.status).toBe(2);
    expect(run.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).text)).toEqual(['春[MASK]', '秋[MASK]']);
    expect(run.stderr).toMatch(/line 2: .*no \[MASK\].*\[NO_MASK\]/);
    expect(run.stderr).toMatch(/line 3: .*empty.*\[EMPTY_INPUT\]/);
  });

  test('human-readable table', () => {
    const run = cli(['fill', '--model', model, '--top-k', '2', '[MASK]天']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^\[MASK\]天\n {2}\[MASK\] #1 at 0–6\n {5}1 {2}\S+\t *\d+\.\d\d% {2}\S+天\n {5}2 /);
    expect(run.stdout).toMatch(/other\t *\d+\.\d\d%/);
  });

  test('fill --joint prints whole-word candidates; --json carries words as fill() returns them', async () => {
    const text = '掩耳[MASK][MASK]，自欺欺人';
    const json = cli(['fill', '--json', '--joint', '--beam', '3', '--top-k', '2', '--model', model, text]);
    expect(json.status, json.stderr).toBe(0);
    const { createFillMask } = await api();
    const tk = await createFillMask({ model, backend: 'auto' });
    try {
      const expected = await tk.fill(text, { joint: true, beam: 3, topK: 2 });
      expect(JSON.parse(json.stdout).words).toEqual(expected.words);
      const table = cli(['fill', '--joint', '--model', model, '--top-k', '2', text]);
      expect(table.stdout).toMatch(/word #1: \[MASK\] #1–#2 at 2–14 \(joint\)\n {5}1 {2}\S\S\t/);
      expect(table.stdout).toContain(expected.words![0]!.candidates[0]!.sequence);
      expect(cli(['fill', '--beam', '2', '--model', model, text])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--beam needs --joint/) });
    } finally {
      await tk.dispose();
    }
  });

  test('fill --explain: heatmap lines per mask; --json adds explain() of each top candidate', async () => {
    const text = '床前明月[MASK]，疑是地上霜。';
    const json = cli(['fill', '--json', '--explain', '--model', model, text]);
    expect(json.status, json.stderr).toBe(0);
    const line = JSON.parse(json.stdout);
    const { createFillMask } = await api();
    const tk = await createFillMask({ model, backend: 'auto' });
    try {
      const expected = await tk.explain(text, 0, line.masks[0].candidates[0].token);
      expect(line.explanations).toHaveLength(1);
      expect(line.explanations[0].tokens).toEqual(expected.tokens);
      expect(line.explanations[0].top).toEqual(expected.top);
    } finally {
      await tk.dispose();
    }
    const table = cli(['fill', '--explain', '--model', model, text]);
    expect(table.status, table.stderr).toBe(0);
    // Not a terminal: no escape codes; each token followed by a bar (supports) or '-'.
    expect(table.stdout).not.toContain('\x1b[');
    expect(table.stdout).toMatch(/explain \S+ \(log P -?\d+\.\d{3}.*\n {6}床[▁▂▃▄▅▆▇█-] 前[▁▂▃▄▅▆▇█-] .*\[MASK\] ，/);
    expect(table.stdout).toMatch(/\n {6}top: \S+ [+-]\d\.\d{3}/);
  });

  test('usage and load errors', () => {
    expect(cli(['fill', '--model', join(model, 'nope'), '[MASK]'])).toMatchObject({ status: 1, stderr: expect.stringMatching(/does not exist/) });
    expect(cli(['frobnicate'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/unknown command 'frobnicate'/) });
    expect(cli(['fill', '--top-k'])).toMatchObject({ status: 2 });
    expect(cli(['tokenize', 'x'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--vocab PATH or --model DIR/) });
    const help = cli(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/tiankong fill .*--model DIR/);
  });

  test('tokenize --json equals HF tokenizers (tokens, ids incl. [CLS]/[SEP], UTF-16 offsets)', async () => {
    const texts = ['春眠不觉晓，处处闻[MASK]鸟。', 'Hello, 世界! 123 [mask] ［MASK］', '😀 a\u0301 \u00e9 中文', '  '];
    const run = cli(['tokenize', '--json', '--vocab', join(model, 'vocab.txt')], texts.join('\n'));
    expect(run.status, run.stderr).toBe(0);
    const ours = run.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
    const ref = await Reference.create(model);
    for (const [i, text] of texts.entries()) {
      const theirs = await ref.encodeFull(text.replace(/\[mask\]|［MASK］/g, '[MASK]'));
      expect(ours[i].ids, text).toEqual(theirs.ids);
      expect(ours[i].tokens, text).toEqual(theirs.tokens);
      if (!/mask|MASK/.test(text)) expect(ours[i].offsets, text).toEqual(theirs.offsets);
    }
  });
});
