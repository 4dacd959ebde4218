// What a user does: `npm pack` the package, install the tarball into a fresh project, import
// it by name and fill a mask; run its `tiankong` bin, and every `npx tiankong` command of the
// README. Checks that `files` ships everything the runtime needs (dist/, the wasm builds, ORT's
// wasm copy, bin/) and nothing from the repo. Every child process is awaited asynchronously: npm
// pack and install take tens of seconds on a loaded machine, and a blocking call for that long
// starves the test runner's RPC ("Timeout calling onTaskUpdate").
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { missingPrerequisite, repoRoot, testModelDir } from './fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const execFileAsync = promisify(execFile);

/** Runs a command to its end without blocking this process: status, stdout, stderr. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; timeout?: number },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeout ?? 300_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe.skipIf(missing !== null)('packed tarball in a fresh project', () => {
  let work: string;
  let project: string;
  let model: string;

  beforeAll(async () => {
    model = testModelDir();
    work = mkdtempSync(join(tmpdir(), 'tiankong-pack-'));
    // --ignore-scripts: the current build (prepack would rebuild dist/ under the other suites);
    // tests/e2e/pack-clone.test.ts packs a fresh clone with its prepack build.
    const { stdout } = await execFileAsync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
      cwd: repoRoot,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    // npm's JSON comes after whatever the prepack build prints.
    const packed = JSON.parse(stdout.slice(stdout.search(/^\[\s*\{/m)));
    const files: string[] = packed[0].files.map((f: { path: string }) => f.path);
    expect(files).toEqual(
      expect.arrayContaining([
        'bin/tiankong.js',
        'dist/index.js',
        'dist/browser.js',
        'dist/worker.js',
        'dist/index.d.ts',
        'dist/core/wasm/tiankong-core.wasm',
        'dist/core/wasm/tiankong-core.mjs',
      ]),
    );
    // ONNX Runtime's wasm comes from onnxruntime-web (no copy); web/src/ holds the sources the source maps name.
    expect(
      files.filter((f) => !/^(bin|dist|model\/default|web\/src)\/|^package\.json$|^README|^LICENSE/.test(f)),
    ).toEqual([]);
    expect(packed[0].size).toBeLessThan(30e6);
    project = join(work, 'app');
    await execFileAsync('mkdir', ['-p', project]);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'app', version: '1.0.0', type: 'module', private: true }),
    );
    const tarball = join(work, packed[0].filename);
    const install = (mode: string) =>
      run('npm', ['install', mode, '--ignore-scripts', '--no-audit', '--no-fund', tarball], { cwd: project });
    // Offline from the npm cache when it has every dependency; otherwise the registry may fill gaps.
    const offline = await install('--offline');
    if (offline.status !== 0) {
      const online = await install('--prefer-offline');
      expect(online.status, online.stderr).toBe(0);
    }
  });
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('import "tiankong" and fill (onnxruntime-web resolves from the install)', async () => {
    expect(readdirSync(join(project, 'node_modules'))).toContain('onnxruntime-web');
    writeFileSync(
      join(project, 'use.mjs'),
      `
      import { createFillMask, TiankongError } from 'tiankong';
      const tk = await createFillMask({ model: ${JSON.stringify(model)} });
      const result = await tk.fill('春眠不觉晓，处处闻[MASK]鸟。', { topK: 2 });
      const error = await tk.fill('no mask').catch((e) => e);
      console.log(JSON.stringify({ n: result.masks[0].candidates.length, backend: tk.stats().backend,
        code: error instanceof TiankongError ? error.code : String(error) }));
      await tk.dispose();
    `,
    );
    const used = await run(process.execPath, ['use.mjs'], { cwd: project, timeout: 120_000 });
    expect(used.status, used.stderr).toBe(0);
    // onnxruntime-node is an optional peer, not installed here: the wasm backend runs.
    expect(JSON.parse(used.stdout)).toEqual({ n: 2, backend: 'wasm', code: 'NO_MASK' });
  });

  test('the installed bin runs', async () => {
    const bin = await run(
      join(project, 'node_modules', '.bin', 'tiankong'),
      ['fill', '--json', '--model', model, '[MASK]天'],
      { cwd: project, timeout: 120_000 },
    );
    expect(bin.status, bin.stderr).toBe(0);
    expect(JSON.parse(bin.stdout).masks[0].candidates).toHaveLength(5);
  });

  test('every `npx tiankong` command of the README works from the install (packaged model and vocab)', async () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const commands = blocks
      .flatMap((block) => block.split('\n'))
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => line.startsWith('npx tiankong '));
    expect(commands.length).toBeGreaterThanOrEqual(4);
    // "Bring your own BERT" fills with what scripts/export-model wrote: a model directory stands in for it.
    cpSync(model, join(project, 'out', 'bert-base-chinese'), { recursive: true });
    for (const command of commands) {
      const result = await run('sh', ['-c', command], { cwd: project, timeout: 180_000 });
      expect(result.status, `${command}\n${result.stderr}`).toBe(0);
      expect(result.stdout.trim(), command).not.toBe('');
      if (command.includes('--json'))
        for (const line of result.stdout.trimEnd().split('\n')) expect(() => JSON.parse(line), command).not.toThrow();
    }
  });
});
