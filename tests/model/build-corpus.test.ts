// scripts/build-corpus on a small raw-data folder laid out like ../shared/data: corpus/, corpus-modern/
// and corpus-written/ read together, written pooled as one source, a given vocab kept.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const REPO = join(import.meta.dirname, '../..');
const SCRIPT = join(REPO, 'scripts', 'build-corpus');
let data: string;

function lines(prefix: string, n: number): string {
  return Array.from({ length: n }, (_, i) => `${prefix}第${i}句话，今天天气很好。`).join('\n') + '\n';
}

beforeAll(() => {
  data = mkdtempSync(join(tmpdir(), 'tiankong-corpus-'));
  for (const dir of ['corpus', 'corpus-modern', 'corpus-written']) mkdirSync(join(data, dir));
  writeFileSync(join(data, 'corpus', 'poetry.txt'), lines('诗', 400));
  writeFileSync(join(data, 'corpus', 'tatoeba.txt'), lines('我', 300) + '诗第1句话，今天天气很好。\n');
  writeFileSync(join(data, 'corpus-modern', 'manpages.txt'), lines('命令', 300));
  writeFileSync(join(data, 'corpus-written', 'home.txt'), lines('家', 200));
  writeFileSync(join(data, 'corpus-written', 'shop.txt'), lines('店', 200));
});
afterAll(() => rmSync(data, { recursive: true, force: true }));

function run(out: string, extra: string[] = []) {
  return spawnSync(SCRIPT, ['--out', out, ...extra], {
    encoding: 'utf8',
    env: { ...process.env, TIANKONG_DATA: data },
    timeout: 120_000,
  });
}

describe('scripts/build-corpus', () => {
  test('reads the three folders: each corpus/ and corpus-modern/ file a source, corpus-written/ one', () => {
    const out = join(data, 'out-new');
    const result = run(out, ['--vocab', 'new', '--min-count', '1']);
    expect(result.status, result.stderr).toBe(0);
    const stats = JSON.parse(readFileSync(join(out, 'stats.json'), 'utf8'));
    expect(stats.sources).toEqual(['poetry', 'tatoeba', 'manpages', 'written']);
    expect(stats.corpus).toEqual(['corpus', 'corpus-modern', 'corpus-written']);
    // 1400 distinct lines (the tatoeba copy of a poetry line is a duplicate, dropped).
    expect(stats.duplicatesDropped).toBe(1);
    const all =
      stats.train.lines + stats.val.lines + Object.values<number>(stats.devSources).reduce((a, b) => a + b, 0);
    expect(all).toBe(1400);
    expect(stats.train.bySource.written.lines + (stats.valSources.written ?? 0) + (stats.devSources.written ?? 0)).toBe(
      400,
    );
    const src = readFileSync(join(out, 'train.src'));
    const trainLines = readFileSync(join(out, 'train.txt'), 'utf8').trimEnd().split('\n');
    expect(src.length).toBe(trainLines.length);
    trainLines.forEach((line, i) => {
      const expected = line.startsWith('家') || line.startsWith('店') ? 3 : line.startsWith('命令') ? 2 : undefined;
      if (expected !== undefined) expect(src[i], line).toBe(expected);
    });
  });

  test('--vocab FILE keeps that vocab and counts the characters it lacks as [UNK]', () => {
    const vocabPath = join(data, 'vocab.txt');
    const digits = [...'0123456789'];
    const tokens = [
      '[PAD]',
      '[UNK]',
      '[CLS]',
      '[SEP]',
      '[MASK]',
      ...'诗第句话，今天气很好。',
      ...digits,
      ...digits.map((d) => `##${d}`),
    ];
    writeFileSync(vocabPath, tokens.join('\n') + '\n');
    const out = join(data, 'out-kept');
    const result = run(out, ['--vocab', vocabPath]);
    expect(result.status, result.stderr).toBe(0);
    expect(readFileSync(join(out, 'vocab.txt'), 'utf8')).toBe(readFileSync(vocabPath, 'utf8'));
    const stats = JSON.parse(readFileSync(join(out, 'stats.json'), 'utf8'));
    expect(stats.train.bySource.poetry.unk).toBe(0);
    // 家/店 are not in the vocab: one [UNK] per written line.
    expect(stats.train.bySource.written.unk).toBe(stats.train.bySource.written.lines);
    expect(result.stderr).toMatch(/train written: \d+ lines, \d+ tokens, \[UNK\] [\d.]+%/);
  });

  test('a vocab without the special tokens is refused with its name', () => {
    const bad = join(data, 'bad-vocab.txt');
    writeFileSync(bad, '[PAD]\n[UNK]\n诗\n');
    const result = run(join(data, 'out-bad'), ['--vocab', bad]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`the vocab ${bad} lacks [CLS], [SEP], [MASK]`);
  });
});
