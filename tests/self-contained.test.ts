// A clone is whole: no tracked file names a path of the machine it was made on (model.json's
// source, benchmark results, docs, defaults in scripts), and what the product needs from the raw
// data is committed in derived form (the app's idiom data, the test fixtures) with its licence.
// The rest of "works without ../shared" is tested where it happens (TIANKONG_DATA=/nonexistent in
// tests/app/idioms-asset.test.ts; the parity, core and benchmark-input suites fall back to the
// fixtures) and by cloning: tests/e2e/pack-clone.test.ts.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: REPO, encoding: 'utf8' }).split('\0').filter(Boolean);

describe('a plain clone is self-contained', () => {
  test('no tracked file holds a machine path (under the work, root, home or Users folders)', () => {
    const machinePath = /(?<![\w.-])\/(work|root|Users)\/|(?<![\w.-])\/home\/[a-z]/;
    const offending: string[] = [];
    for (const file of tracked) {
      if (file === 'package-lock.json' || !existsSync(path.join(REPO, file))) continue;
      const bytes = readFileSync(path.join(REPO, file));
      if (bytes.includes(0)) continue; // binary
      bytes
        .toString('utf8')
        .split('\n')
        .forEach((line, i) => {
          if (machinePath.test(line)) offending.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
        });
    }
    expect(offending).toEqual([]);
  });

  test('derived data and fixtures are committed with their licences', () => {
    for (const file of [
      'web/app/data/idioms.json',
      'web/app/data/README.md',
      'web/app/data/LICENSE-chinese-xinhua-MIT',
      'tests/fixtures/data/README.md',
      'tests/fixtures/data/vocab/bert-base-chinese/vocab.txt',
      'tests/fixtures/data/idioms/idioms.csv',
      'tests/fixtures/data/corpus/poetry.txt',
      'tests/fixtures/data/famous/famous.jsonl',
      'LICENSE',
    ]) {
      expect(tracked, file).toContain(file);
    }
  });

  // train-default-model is left out: where a corpus split already exists (.cache/corpus) it trains.
  test.each(['build-corpus', 'bench', 'bench-core', 'bench-tokenizer', 'build-idioms'])(
    'scripts/%s without the raw data: says so and skips (exit 0)',
    (script) => {
      const run = spawnSync(path.join(REPO, 'scripts', script), [], {
        encoding: 'utf8',
        env: { ...process.env, TIANKONG_DATA: '/nonexistent' },
        timeout: 60_000,
      });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/needs the raw data in \/nonexistent .*skipped/);
    },
  );
});
