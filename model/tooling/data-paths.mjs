// Where the raw data lives: the one place scripts and tests resolve it. TIANKONG_DATA overrides the
// default, ../shared/data beside the repository. Only work that needs the full corpus reads it
// (build-corpus, build-memory, training, evaluation); the product and its tests use files in the repo.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The raw data directory (it may not exist: check with dataAvailable). */
export function dataDir() {
  return resolve(process.env.TIANKONG_DATA ?? join(REPO_ROOT, '../shared/data'));
}

/** A path inside the raw data directory, e.g. dataPath('famous/famous.jsonl'). */
export function dataPath(relative) {
  return join(dataDir(), relative);
}

/** True when the raw data directory holds `relative` (default: the corpus). */
export function dataAvailable(relative = 'corpus') {
  return existsSync(dataPath(relative));
}

/** The message a script prints when it needs the raw data and it is absent. */
export function missingDataMessage(what) {
  return `${what} needs the raw data in ${dataDir()} (set TIANKONG_DATA to its location); it is not part of the repository`;
}
