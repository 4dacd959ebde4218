// scripts/build-memory's weighted extra lines (the form of its word collocations): a line
// "TEXT<tab>N" adds its n-grams to the memory, so a blank completing it gains where the corpus
// alone gives nothing; a malformed weight is refused naming the file and line, and leaves the
// model directory's memory as it was. The gains are read back through the C++ core (the product's
// Memory.evidence), not from the script.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { missingPrerequisite, repoRoot, testModelDir } from '../runtime/fixtures.js';

const missing = missingPrerequisite();
const FIXTURES = join(repoRoot, 'tests', 'fixtures', 'data');
const LINE = '汤姆工作'; // not in the fixture corpus; 工作 is
let work: string;
let corpus: string;

function buildMemory(dir: string, extra: string[]) {
  return spawnSync(
    join(repoRoot, 'scripts', 'build-memory'),
    [dir, '--corpus', corpus, '--max-ngrams', '200000', '--words', 'none', ...extra],
    { encoding: 'utf8', env: { ...process.env, TIANKONG_DATA: FIXTURES }, timeout: 120_000 },
  );
}

/** The memory's gain per matched n-gram length for `char` at the blank of `text`. */
async function gains(dir: string, text: string, char: string): Promise<number[]> {
  const { openEvaluator } = await import('../../model/tooling/fill-eval.mjs');
  const ev = await openEvaluator(dir, { threads: 1 });
  try {
    const encoding = ev.encode(text);
    const id = ev.vocab.indexOf(char);
    const evidence = ev.memory.evidence(encoding.ids, encoding.maskPositions, 0, Int32Array.of(id), 6);
    return Array.from(evidence.gains as Float32Array).slice(0, 9);
  } finally {
    ev.dispose();
  }
}

describe.skipIf(missing !== null)('scripts/build-memory extra lines with weights', () => {
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'tiankong-build-memory-'));
    corpus = join(work, 'corpus.txt');
    const dir = join(FIXTURES, 'corpus');
    writeFileSync(
      corpus,
      readdirSync(dir)
        .filter((f) => f.endsWith('.txt'))
        .map((f) => readFileSync(join(dir, f), 'utf8'))
        .join(''),
    );
    expect(readFileSync(corpus, 'utf8')).not.toContain(LINE);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  test('a weighted line (written twice, as the collocations are) gives its longer n-grams', async () => {
    const plain = join(work, 'plain');
    const withLine = join(work, 'with-line');
    cpSync(testModelDir(), plain, { recursive: true });
    cpSync(testModelDir(), withLine, { recursive: true });
    const lines = join(work, 'collocations.tsv');
    writeFileSync(lines, `${LINE}\t4\n${LINE}\t4\n`);
    const a = buildMemory(plain, ['--collocations', 'none']);
    expect(a.status, a.stderr).toBe(0);
    const b = buildMemory(withLine, ['--collocations', lines]);
    expect(b.status, b.stderr).toBe(0);
    const text = '汤姆工[MASK]';
    const without = await gains(plain, text, '作');
    const withIt = await gains(withLine, text, '作');
    // Each term's gain is booked at its longest match: the corpus knows only 工作 (a bigram); the
    // line makes 汤姆工作 a 4-gram, and 作 gains more there.
    expect(without[2]).toBeGreaterThan(0);
    expect(without[3] + without[4]).toBe(0);
    expect(withIt[4]).toBeGreaterThan(without[2]);
    const info = JSON.parse(readFileSync(join(withLine, 'model.json'), 'utf8'));
    expect(info.memory.file).toBe('memory.bin');
  });

  test('a bad weight is refused naming the file and line; the memory is left as it was', () => {
    const dir = join(work, 'bad');
    cpSync(testModelDir(), dir, { recursive: true });
    const ok = buildMemory(dir, ['--collocations', 'none']);
    expect(ok.status, ok.stderr).toBe(0);
    const before = readFileSync(join(dir, 'memory.bin'));
    const manifestBefore = readFileSync(join(dir, 'model.json'), 'utf8');
    const lines = join(work, 'bad.tsv');
    writeFileSync(lines, `${LINE}\t4\n${LINE}\tmany\n`);
    const result = buildMemory(dir, ['--collocations', lines]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`${lines}:2: the weight after the tab must be a whole number 1..255`);
    expect(readFileSync(join(dir, 'memory.bin')).equals(before)).toBe(true);
    expect(readFileSync(join(dir, 'model.json'), 'utf8')).toBe(manifestBefore);
    const absent = buildMemory(dir, ['--collocations', join(work, 'absent.tsv')]);
    expect(absent.status).toBe(2);
    expect(absent.stderr).toContain('no such file');
  });
});
