// The CLI as a user runs it (spawned node bin/tiankong.js): fill --json schema (one line per
// input line, an error object for a bad one), exit code 2 on bad lines while good lines still
// print, usage errors once with exit 2, a closed stdout, tokenize --json against HF tokenizers
// and its length rule, and that the process exits promptly after its work (pthread workers and
// ORT are shut down). The CLI's edge cases (stdin, stdout, encodings, numbers): tests/reliability/cli-edges.test.ts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillResult } from '../../web/src/index.js';
import { cli, cliHead } from './cli-run.js';
import { Reference, api, missingPrerequisite, repoRoot, testModelDir } from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

describe.skipIf(missing !== null)('tiankong CLI', () => {
  let model: string;
  beforeAll(() => {
    model = testModelDir();
  });

  test('fill --json prints fill() results, one object per input', async () => {
    for (const backend of ['wasm', 'auto']) {
      const run = await cli([
        'fill',
        '--json',
        '--model',
        model,
        '--backend',
        backend,
        '--top-k',
        '3',
        '春眠不觉晓，处处闻[MASK]鸟。',
        '[MASK]天[MASK]',
      ]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.signal).toBeNull(); // exited by itself, not killed by the timeout
      const lines = run.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as FillResult);
      expect(lines).toHaveLength(2);
      expect(lines[1]!.masks).toHaveLength(2);
      for (const result of lines) {
        expect(Object.keys(result).sort()).toEqual(['cached', 'masks', 'other', 'text', 'timings']);
        expect(Object.keys(result.timings).sort()).toEqual(['decodeMs', 'inferenceMs', 'tokenizeMs', 'totalMs']);
        for (const mask of result.masks) {
          expect(Object.keys(mask).sort()).toEqual(['candidates', 'end', 'index', 'other', 'start']);
          expect(result.text.slice(mask.start, mask.end)).toBe('[MASK]');
          expect(mask.candidates).toHaveLength(3);
          for (const c of mask.candidates)
            expect(Object.keys(c).sort()).toEqual(['pinyin', 'score', 'sequence', 'token']);
        }
      }
    }
  });

  test('stdin lines: bad lines → stderr + exit 2 and, with --json, an error object on their own line', async () => {
    const run = await cli(['fill', '--json', '--model', model], '春[MASK]\n没有掩码\n\n秋[MASK]\n');
    expect(run.status).toBe(2);
    const lines = run.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    // One output line per input line, in order: the output lines up with the input.
    expect(lines.map((l) => l.text)).toEqual(['春[MASK]', '没有掩码', '', '秋[MASK]']);
    expect(lines.map((l) => l.error?.code ?? 'ok')).toEqual(['ok', 'NO_MASK', 'EMPTY_INPUT', 'ok']);
    expect(lines[1].error.message).toMatch(/no \[MASK\]/);
    expect(run.stderr).toMatch(/line 2: .*no \[MASK\].*\[NO_MASK\]/);
    expect(run.stderr).toMatch(/line 3: .*empty.*\[EMPTY_INPUT\]/);
  });

  test('a UTF-8 BOM at the start of stdin is not part of the first line', async () => {
    const run = await cli(
      ['fill', '--json', '-m', model, '-k', '1'],
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('春[MASK]\n秋[MASK]\n')]),
    );
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as FillResult);
    expect(lines.map((l) => l.text)).toEqual(['春[MASK]', '秋[MASK]']);
    expect(lines[0]!.masks[0]).toMatchObject({ start: 1, end: 7 });
    const tokens = await cli(['tokenize', '--json', '--vocab', join(model, 'vocab.txt')], '\uFEFF春\n');
    expect(JSON.parse(tokens.stdout).offsets).toEqual([
      [0, 0],
      [0, 1],
      [0, 0],
    ]);
  });

  test('a closed stdout (| head -1) ends fill and tokenize quietly', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `春[MASK]${i}`).join('\n');
    for (const args of [
      ['fill', '--json', '--model', model],
      ['fill', '--model', model],
      ['tokenize', '--json', '--model', model],
    ]) {
      const run = await cliHead(args, lines);
      expect(run.first, args.join(' ')).toMatch(/春/);
      expect(run.stderr, args.join(' ')).toBe(''); // no EPIPE stack trace
      expect(run.status, args.join(' ')).toBe(0);
    }
  });

  test('usage errors: once, exit 2, before any input is read', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `春[MASK]${i}`).join('\n');
    const topK = await cli(['fill', '--json', '--top-k', '0', '--model', model], lines);
    expect(topK).toMatchObject({ status: 2, stdout: '' });
    expect(topK.stderr.match(/-k\/--top-k must be/g)).toHaveLength(1);
    expect(topK.stderr).toMatch(/got 0\n\(tiankong --help shows the usage\)\n$/);
    const filter = await cli(['fill', '--filter', 'latin', '--model', model], lines);
    expect(filter).toMatchObject({ status: 2, stdout: '' });
    expect(filter.stderr.match(/filter/g)).toHaveLength(1);
    expect(await cli(['fill', '--threads', '0', '--model', model, '[MASK]'])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/threads must be/),
    });
    expect(await cli(['fill', '--backend', 'gpu', '--model', model, '[MASK]'])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/backend must be .*"gpu"/),
    });
    expect(await cli(['fill', '--top-k', '5x', '[MASK]'])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/-k\/--top-k must be a whole number from 1 to the vocabulary size, got '5x'/),
    });
    expect(await cli(['fill', '--vocab', 'v.txt', '[MASK]'])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/--vocab is an option of tiankong tokenize/),
    });
  });

  test('--version, -k and -m', async () => {
    const version = await cli(['--version']);
    expect(version).toMatchObject({
      status: 0,
      stdout: `tiankong ${JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version}\n`,
    });
    const short = await cli(['fill', '--json', '-k', '2', '-m', model, '[MASK]天']);
    expect(short.status, short.stderr).toBe(0);
    expect(JSON.parse(short.stdout).masks[0].candidates).toHaveLength(2);
    expect((await cli(['--help'])).stdout).toMatch(/-k, --top-k N/);
  });

  test('human-readable table', async () => {
    const run = await cli(['fill', '--model', model, '--top-k', '2', '[MASK]天']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^\[MASK\]天\n {2}\[MASK\] #1 at 0–6\n {5}1 {2}\S+( \S+)?\t *\d+\.\d\d% {2}\S+天\n {5}2 /,
    );
    expect(run.stdout).toMatch(/other\t *\d+\.\d\d%/);
  });

  test('fill --joint prints whole-word candidates; --json carries words as fill() returns them', async () => {
    const text = '掩耳[MASK][MASK]，自欺欺人';
    const json = await cli(['fill', '--json', '--joint', '--beam', '3', '--top-k', '2', '--model', model, text]);
    expect(json.status, json.stderr).toBe(0);
    const { createFillMask } = await api();
    const tk = await createFillMask({ model, backend: 'auto' });
    try {
      const expected = await tk.fill(text, { joint: true, beam: 3, topK: 2 });
      expect(JSON.parse(json.stdout).words).toEqual(expected.words);
      const table = await cli(['fill', '--joint', '--model', model, '--top-k', '2', text]);
      expect(table.stdout).toMatch(/word #1: \[MASK\] #1–#2 at 2–14 \(joint\)\n {5}1 {2}\S\S( \S+ \S+)?\t/);
      expect(table.stdout).toContain(expected.words![0]!.candidates[0]!.sequence);
      expect(await cli(['fill', '--beam', '2', '--model', model, text])).toMatchObject({
        status: 2,
        stderr: expect.stringMatching(/--beam needs --joint/),
      });
    } finally {
      await tk.dispose();
    }
  });

  test('fill --explain: heatmap lines per mask; --json adds explain() of each top candidate', async () => {
    const text = '床前明月[MASK]，疑是地上霜。';
    const json = await cli(['fill', '--json', '--explain', '--model', model, text]);
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
    const table = await cli(['fill', '--explain', '--model', model, text]);
    expect(table.status, table.stderr).toBe(0);
    // Not a terminal: no escape codes; each token followed by a bar (supports) or '-'.
    expect(table.stdout).not.toContain('\x1b[');
    expect(table.stdout).toMatch(/explain \S+ \(log P -?\d+\.\d{3}.*\n {6}床[▁▂▃▄▅▆▇█-] 前[▁▂▃▄▅▆▇█-] .*\[MASK\] ，/);
    expect(table.stdout).toMatch(/\n {6}top: \S+ [+-]\d\.\d{3}/);
  });

  test('usage and load errors', async () => {
    expect(await cli(['fill', '--model', join(model, 'nope'), '[MASK]'])).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/does not exist/),
    });
    // A file where the model directory belongs: said so, with the folder to pass instead.
    const file = await cli(['fill', '--model', join(model, 'model.json'), '[MASK]']);
    expect(file).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/model\.json is a file, not a model directory.*pass the folder that holds it/),
    });
    expect(file.stderr).not.toMatch(/does not exist/);
    expect(await cli(['tokenize', '--model', join(model, 'model.json'), 'x'])).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/is a file, not a model directory/),
    });
    expect(await cli(['frobnicate'])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/unknown command 'frobnicate'/),
    });
    expect(await cli(['fill', '--top-k'])).toMatchObject({ status: 2 });
    expect(await cli(['tokenize', '--vocab', 'a', '--model', 'b', 'x'])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/--vocab PATH or --model DIR, not both/),
    });
    const help = await cli(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/tiankong fill .*-m DIR/);
  });

  test('tokenize --json equals HF tokenizers (tokens, ids incl. [CLS]/[SEP], UTF-16 offsets)', async () => {
    const texts = ['春眠不觉晓，处处闻[MASK]鸟。', 'Hello, 世界! 123 [mask] ［MASK］', '😀 a\u0301 \u00e9 中文', '  '];
    const run = await cli(['tokenize', '--json', '--vocab', join(model, 'vocab.txt')], texts.join('\n'));
    expect(run.status, run.stderr).toBe(0);
    const ours = run.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const ref = await Reference.create(model);
    for (const [i, text] of texts.entries()) {
      const theirs = await ref.encodeFull(text.replace(/\[mask\]|［MASK］/g, '[MASK]'));
      expect(ours[i].ids, text).toEqual(theirs.ids);
      expect(ours[i].tokens, text).toEqual(theirs.tokens);
      if (!/mask|MASK/.test(text)) expect(ours[i].offsets, text).toEqual(theirs.offsets);
    }
  });

  test("tokenize: the packaged default vocab without --vocab/--model; the model's max length; too long is TOO_LONG unless --truncate; [MASK] kept", async () => {
    const defaults = await cli(['tokenize', '--json', '床前[MASK]光']);
    expect(defaults.status, defaults.stderr).toBe(0);
    const defaultVocab = readFileSync(join(repoRoot, 'model', 'default', 'vocab.txt'), 'utf8').split('\n');
    const parsed = JSON.parse(defaults.stdout);
    expect(parsed.tokens).toEqual(['[CLS]', '床', '前', '[MASK]', '光', '[SEP]']);
    expect(parsed.ids.map((id: number) => defaultVocab[id])).toEqual(parsed.tokens);
    // The tiny model reads at most 128 tokens: 126 + [CLS] + [SEP].
    const fits = `${'春'.repeat(125)}[MASK]`;
    const over = `${'春'.repeat(200)}[MASK]`;
    const run = await cli(['tokenize', '--json', '--model', model], `${fits}\n${over}\n`);
    expect(run.status).toBe(2);
    const [ok, tooLong] = run.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(ok.tokens).toHaveLength(128);
    expect(ok.tokens.at(-2)).toBe('[MASK]');
    expect(tooLong).toEqual({
      text: over.slice(0, 200), // error objects echo the first 200 characters
      textCut: true,
      error: { code: 'TOO_LONG', message: expect.stringMatching(/201 tokens long but the limit is 126/) },
    });
    expect(run.stderr).toMatch(/line 2: .*TOO_LONG/);
    // The same as fill says about the same text.
    const fill = await cli(['fill', '--json', '--model', model], `${over}\n`);
    expect(JSON.parse(fill.stdout).error.code).toBe('TOO_LONG');
    const truncated = await cli(['tokenize', '--json', '--truncate', '--model', model, over]);
    expect(truncated.status, truncated.stderr).toBe(0);
    expect(JSON.parse(truncated.stdout)).toMatchObject({ truncated: 75 });
    expect(JSON.parse(truncated.stdout).tokens).toHaveLength(128);
    expect(
      (await cli(['tokenize', '--vocab', join(model, 'vocab.txt'), '--max-length', '8', '春'.repeat(7)])).status,
    ).toBe(2);
  });
});

describe.skipIf(missing !== null)('tiankong CLI with a vocab saved with a BOM', () => {
  let work: string;
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the BOM is not part of [PAD]', async () => {
    work = mkdtempSync(join(tmpdir(), 'tiankong-cli-bom-'));
    const vocab = join(work, 'vocab.txt');
    writeFileSync(
      vocab,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(join(testModelDir(), 'vocab.txt'))]),
    );
    const run = await cli(['tokenize', '--json', '--vocab', vocab, '春[MASK]']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/has no \[PAD\]/);
    const plain = await cli(['tokenize', '--json', '--vocab', join(testModelDir(), 'vocab.txt'), '春[MASK]']);
    expect(JSON.parse(run.stdout)).toEqual(JSON.parse(plain.stdout));
  });
});
