// Shared by the tests/reliability suites: result invariants (one implementation, in
// tests/harness/fill-inputs.mjs, also used by scripts/soak and scripts/fuzz-fill) and faulty copies
// of the test model.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { FillResult } from '../../web/src/index.js';
import { resultViolations } from '../harness/fill-inputs.mjs';

export { INVISIBLE_CHARS, canonicalMasks, wellFormed } from '../harness/fill-inputs.mjs';

/** See resultViolations: the invariants every result satisfies whatever the input. */
export function expectWellFormedResult(input: string, result: FillResult): void {
  expect(resultViolations(input, result)).toEqual([]);
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Writes a copy of `modelDir` with `edit` applied; model.json is re-hashed unless `keepHashes`. */
export function modelVariant(modelDir: string, dir: string, edit: (dir: string) => void, keepHashes = false): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // Every file model.json lists (a core model's head.bin, the memory too) travels with it.
  const listed = Object.keys(JSON.parse(readFileSync(join(modelDir, 'model.json'), 'utf8')).files);
  const files = ['model.json', ...listed];
  for (const file of files) copyFileSync(join(modelDir, file), join(dir, file));
  edit(dir);
  if (!keepHashes) {
    const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
    for (const file of files.filter((f) => f !== 'model.json' && existsSync(join(dir, f)))) {
      const bytes = readFileSync(join(dir, file));
      manifest.files[file] = { sha256: sha256(bytes), bytes: bytes.byteLength };
    }
    writeFileSync(join(dir, 'model.json'), JSON.stringify(manifest));
  }
  return dir;
}

/** Generates the hand-built faulty graphs (see make-faulty-models.py) into `out`. */
export function makeFaultyGraphs(out: string, vocabSize: number): void {
  execFileSync(
    '/usr/bin/python3',
    [fileURLToPath(new URL('make-faulty-models.py', import.meta.url)), out, String(vocabSize)],
    { stdio: 'pipe' },
  );
}
