// `npm pack` in a fresh clone: its prepack builds what the package needs (scripts/build-wasm: both
// WebAssembly builds of the core; scripts/build-js: dist/), so a clone packs a working package
// without running anything first. The tarball is installed into an empty project and fills a blank
// with the packaged default model. The clone reuses this checkout's node_modules (npm ci is not
// what is tested) and needs Emscripten, like scripts/build-wasm; it skips with a message without.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPO } from './harness.js';

const execFileAsync = promisify(execFile);
const missing =
  spawnSync('sh', ['-c', 'command -v emcmake']).status === 0
    ? null
    : 'Emscripten (emcmake) not found: apt-get install emscripten binaryen; fresh-clone pack test skipped';
if (missing) console.warn(missing);

/** Runs a command to its end without blocking this process. */
function run(
  command: string,
  args: string[],
  cwd: string,
  timeout = 900_000,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe.skipIf(missing !== null)('npm pack in a fresh clone', () => {
  let work: string;
  let files: string[];
  let tarball: string;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'tiankong-pack-clone-'));
    const clone = path.join(work, 'clone');
    await execFileAsync('git', ['clone', '--quiet', '--depth', '1', `file://${REPO}`, clone]);
    symlinkSync(path.join(REPO, 'node_modules'), path.join(clone, 'node_modules'));
    const packed = await run('nice', ['npm', 'pack', '--json', '--pack-destination', work], clone);
    expect(packed.status, packed.stderr.slice(-3000)).toBe(0);
    const manifest = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[\s*\{/m)))[0];
    files = manifest.files.map((f: { path: string }) => f.path);
    tarball = path.join(work, manifest.filename);
  }, 1_200_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('prepack built the core and the runtime into the tarball', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'dist/index.js',
        'dist/browser.js',
        'dist/worker.js',
        'dist/index.d.ts',
        'dist/browser.d.ts',
        'dist/core/load-core.js',
        'dist/core/wasm/tiankong-core.mjs',
        'dist/core/wasm/tiankong-core.wasm',
        'dist/core/wasm/tiankong-core-threads.wasm',
        'model/default/model.onnx',
        'model/default/memory.bin',
        'model/default/memory-ngrams.bin',
        'LICENSE',
      ]),
    );
  });

  test('the tarball installs into an empty project and fills a blank with its default model', async () => {
    const project = path.join(work, 'app');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    const install = (mode: string) =>
      run('npm', ['install', mode, '--no-audit', '--no-fund', tarball], project, 300_000);
    const offline = await install('--offline');
    if (offline.status !== 0) {
      const online = await install('--prefer-offline');
      expect(online.status, online.stderr).toBe(0);
    }
    writeFileSync(
      path.join(project, 'use.mjs'),
      `
      import { createFillMask } from 'tiankong';
      const tk = await createFillMask({ backend: 'wasm', threads: 1 });
      const result = await tk.fill('春眠不觉晓，处处闻啼[MASK]。');
      console.log(JSON.stringify({ model: tk.stats().model.name, top: result.masks[0].candidates[0].token }));
      await tk.dispose();
    `,
    );
    const used = await run(process.execPath, ['use.mjs'], project, 120_000);
    expect(used.status, used.stderr).toBe(0);
    expect(JSON.parse(used.stdout)).toEqual({ model: 'tiankong-default', top: '鸟' });
  });
});
