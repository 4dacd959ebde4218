// @ts-check
/**
 * The model the reliability scripts (scripts/soak, scripts/fuzz-fill) run when no --model is
 * given: the tiny seeded test model the test suites generate under .cache/test-model/ (the
 * newest one), else a fresh one made with scripts/make-test-model.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * @param {string} repoRoot
 * @returns {string} a mask-only model directory
 */
export function defaultTestModel(repoRoot) {
  const root = join(repoRoot, '.cache', 'test-model');
  const candidates = existsSync(root)
    ? readdirSync(root)
        .map((name) => join(root, name, 'mask-only'))
        .filter((dir) => existsSync(join(dir, 'model.json')))
    : [];
  if (candidates.length > 0) return candidates.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  const target = join(root, 'scripts');
  const temp = `${target}.tmp-${process.pid}`;
  mkdirSync(root, { recursive: true });
  console.error('generating the tiny test model (scripts/make-test-model)...');
  execFileSync('nice', [join(repoRoot, 'scripts', 'make-test-model'), temp], { stdio: 'inherit' });
  renameSync(temp, target);
  return join(target, 'mask-only');
}
