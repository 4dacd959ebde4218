// The lint stage checks sources, not build outputs: after scripts/start has built the app into
// web/app/dist/ (git-ignored), ESLint and prettier skip it, so `bash scripts/start` followed by
// `bash scripts/test-all` passes on one machine.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import * as prettier from 'prettier';
import { afterAll, describe, expect, test } from 'vitest';

const REPO = join(import.meta.dirname, '../..');
const probeDir = join(REPO, 'web/app/dist/__lint-scope-probe');
const probe = join(probeDir, 'bundle.js');

describe('lint scope', () => {
  afterAll(() => rmSync(probeDir, { recursive: true, force: true }));

  test('a bundle in the git-ignored app build is neither linted nor format-checked', async () => {
    mkdirSync(probeDir, { recursive: true });
    // What a minified bundle looks like to the linters: unused expressions, no formatting.
    writeFileSync(probe, 'var a=1;a==2?b():c()\n');
    const eslint = new ESLint({ cwd: REPO });
    expect(await eslint.isPathIgnored(probe)).toBe(true);
    const info = await prettier.getFileInfo(probe, {
      ignorePath: [join(REPO, '.gitignore'), join(REPO, '.prettierignore')],
    });
    expect(info.ignored).toBe(true);
  });

  test('a tracked source is still linted', async () => {
    const eslint = new ESLint({ cwd: REPO });
    expect(await eslint.isPathIgnored(join(REPO, 'web/app/src/editor.ts'))).toBe(false);
    expect(await eslint.isPathIgnored(join(REPO, 'scripts/build-corpus'))).toBe(false);
  });
});
