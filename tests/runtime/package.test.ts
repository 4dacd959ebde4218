// What a user does: `npm pack` the package, install the tarball into a fresh project, import
// it by name and fill a mask; run its `tiankong` bin. Checks that `files` ships everything
// the runtime needs (dist/, the wasm builds, ORT's wasm copy, bin/) and nothing from the repo.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { missingPrerequisite, repoRoot, testModelDir } from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

describe.skipIf(missing !== null)('packed tarball in a fresh project', () => {
  let work: string;
  let project: string;
  let model: string;

  beforeAll(() => {
    model = testModelDir();
    work = mkdtempSync(join(tmpdir(), 'tiankong-pack-'));
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: repoRoot, encoding: 'utf8' }));
    const files: string[] = packed[0].files.map((f: { path: string }) => f.path);
    expect(files).toEqual(expect.arrayContaining(['bin/tiankong.js', 'dist/index.js', 'dist/browser.js', 'dist/worker.js',
      'dist/index.d.ts', 'dist/core/wasm/tiankong-core.wasm', 'dist/ort/ort-wasm-simd-threaded.wasm', 'dist/ort/ort-wasm-simd-threaded.mjs']));
    expect(files.filter((f) => !/^(bin|dist|model\/default)\/|^package\.json$|^README|^LICENSE/.test(f))).toEqual([]);
    expect(packed[0].size).toBeLessThan(30e6);
    project = join(work, 'app');
    execFileSync('mkdir', ['-p', project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', type: 'module', private: true }));
    const tarball = join(work, packed[0].filename);
    const install = (mode: string) => spawnSync('npm', ['install', mode, '--ignore-scripts', '--no-audit', '--no-fund', tarball],
      { cwd: project, encoding: 'utf8' });
    // Offline from the npm cache when it has every dependency; otherwise the registry may fill gaps.
    const offline = install('--offline');
    if (offline.status !== 0) {
      const online = install('--prefer-offline');
      expect(online.status, online.stderr).toBe(0);
    }
  });
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('import "tiankong" and fill (onnxruntime-web resolves from the install)', () => {
    expect(readdirSync(join(project, 'node_modules'))).toContain('onnxruntime-web');
    writeFileSync(join(project, 'use.mjs'), `
      import { createFillMask, TiankongError } from 'tiankong';
      const tk = await createFillMask({ model: ${JSON.stringify(model)} });
      const result = await tk.fill('春眠不觉晓，处处闻[MASK]鸟。', { topK: 2 });
      const error = await tk.fill('no mask').catch((e) => e);
      console.log(JSON.stringify({ n: result.masks[0].candidates.length, backend: tk.stats().backend,
        code: error instanceof TiankongError ? error.code : String(error) }));
      await tk.dispose();
    `);
    const run = spawnSync(process.execPath, ['use.mjs'], { cwd: project, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    // onnxruntime-node is an optional peer, not installed here: the wasm backend runs.
    expect(JSON.parse(run.stdout)).toEqual({ n: 2, backend: 'wasm', code: 'NO_MASK' });
  });

  test('the installed bin runs', () => {
    const run = spawnSync(join(project, 'node_modules', '.bin', 'tiankong'), ['fill', '--json', '--model', model, '[MASK]天'],
      { cwd: project, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).masks[0].candidates).toHaveLength(5);
  });
});
