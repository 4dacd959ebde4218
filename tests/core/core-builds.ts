// Shared by the tests/core suites: where the built core lives and how to load each build.
// The suites test the BUILT artifacts (dist/core/load-core.js + dist/core/wasm/*), so a
// missing build is reported with the command that makes it.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { TokenizerOptions } from '../../web/src/core/core-module.js';
import type { CoreVariant, LoadedCore } from '../../web/src/core/load-core.js';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const distDir = join(repoRoot, 'dist');
export const loaderPath = join(distDir, 'core', 'load-core.js');
/** bert-base-chinese's vocab.txt, committed as a test fixture (scripts/make-test-fixtures). */
export const vocabPath = join(repoRoot, 'tests', 'fixtures', 'data', 'vocab', 'bert-base-chinese', 'vocab.txt');
export const VARIANTS: CoreVariant[] = ['threads', 'single'];

const BUILD_FILES = [
  'core/load-core.js',
  'core/wasm/tiankong-core-threads.mjs',
  'core/wasm/tiankong-core-threads.wasm',
  'core/wasm/tiankong-core-threads.worker.js',
  'core/wasm/tiankong-core.mjs',
  'core/wasm/tiankong-core.wasm',
];

/** Why the core suites cannot run here, or null. */
export function missingPrerequisite(): string | null {
  const absent = BUILD_FILES.filter((f) => !existsSync(join(distDir, f)));
  if (absent.length)
    return `core build missing (${absent.join(', ')}): run scripts/build-wasm && npx tsc -p web/tsconfig.json`;
  if (!existsSync(vocabPath)) return `vocab fixture not found at ${vocabPath}: run scripts/make-test-fixtures`;
  return null;
}

export async function loadBuild(variant: CoreVariant): Promise<LoadedCore> {
  const loader = (await import(pathToFileURL(loaderPath).href)) as typeof import('../../web/src/core/load-core.js');
  return loader.loadCore({ variant });
}

/** bert-base-chinese's settings (no lowercasing), as in tokenizer.json. */
export const BERT_BASE_CHINESE: TokenizerOptions = {
  cleanText: true,
  handleChineseChars: true,
  stripAccents: false,
  lowercase: false,
  maxInputCharsPerWord: 100,
  maxLength: 512,
};

export function readVocab(): Uint8Array {
  return new Uint8Array(readFileSync(vocabPath));
}

/** Deterministic PRNG so failures reproduce. */
export { mulberry32 as rng } from '../../model/tooling/prng.mjs';
