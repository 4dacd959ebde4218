// Model files are plain names inside the model directory (model/manifest.ts, checkFileName): a
// model.json that names anything else — a path up and out, an absolute path, a scheme, a host, an
// escape the URL parser would undo — is BAD_MODEL naming the field, before anything is read or
// fetched, from a directory, over HTTP and as bytes. Messages never carry the size, sha256 or
// content of the file outside (which the loader used to read and report).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, missingPrerequisite, testMemoryModelDir, testModelDir } from '../runtime/fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

/** Names that must never leave the model directory, for every field that names a file. */
const ESCAPES = [
  '../secret.txt',
  '../../../../../../etc/passwd',
  '/etc/passwd',
  '..',
  '.',
  '//other-host/x',
  'http://other-host/x',
  'https:x',
  'sub/vocab.txt',
  'sub\\vocab.txt',
  'C:\\secret.txt',
  '%2e%2e',
  '%2e%2e/secret.txt',
  '.\t.',
  '.\n.',
  ' vocab.txt',
  'vocab.txt\u0000',
  'vocab.txt?x=1',
  'vocab.txt#x',
  '..\u2215secret.txt',
  '.hidden',
  '',
];

const SECRET = 'the content of a file outside the model directory\n'.repeat(7);
const secretSha = createHash('sha256').update(SECRET).digest('hex');
const secretSize = String(Buffer.byteLength(SECRET));

describe.skipIf(missing !== null)('model file names never leave the model directory', () => {
  let work: string;
  let requests: string[];
  let server: Server;
  let origin: string;
  let createFillMask: Awaited<ReturnType<typeof api>>['createFillMask'];

  /** work/<name>/ = the (memory) test model with model.json edited by `edit`; the secret lies in work/. */
  function variant(name: string, edit: (manifest: any) => void, source = testModelDir()): string {
    const dir = join(work, name);
    mkdirSync(dir, { recursive: true });
    for (const file of ['model.onnx', 'vocab.txt', 'memory.bin']) {
      try {
        copyFileSync(join(source, file), join(dir, file));
      } catch {
        // the plain model has no memory.bin
      }
    }
    const manifest = JSON.parse(readFileSync(join(source, 'model.json'), 'utf8'));
    edit(manifest);
    writeFileSync(join(dir, 'model.json'), JSON.stringify(manifest));
    return dir;
  }

  async function outcome(promise: Promise<{ dispose(): Promise<void> }>) {
    const { TiankongError } = await api();
    try {
      await (await promise).dispose();
      return { code: 'resolved', message: '' };
    } catch (error) {
      expect(error).toBeInstanceOf(TiankongError);
      return { code: (error as { code: string }).code, message: (error as Error).message };
    }
  }

  /** What is wrong with how a load that had to be refused ended ([] when it was refused properly). */
  function problems(result: { code: string; message: string }, field: string, label: string): string[] {
    const found: string[] = [];
    if (result.code !== 'BAD_MODEL') found.push(`${label}: ${result.code} ${result.message}`);
    if (
      result.message.includes(secretSha) ||
      new RegExp(`\\b${secretSize}\\b`).test(result.message) ||
      result.message.includes('the content of a file')
    )
      found.push(`${label}: the message reveals the outside file: ${result.message}`);
    if (
      result.code === 'BAD_MODEL' &&
      !(result.message.includes(`${field} is `) && /not a file name inside the model directory/.test(result.message))
    ) {
      found.push(`${label}: the message does not name ${field}: ${result.message}`);
    }
    return found;
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tiankong-escape-'));
    writeFileSync(join(work, 'secret.txt'), SECRET);
    ({ createFillMask } = await api());
    requests = [];
    server = createServer((request, response) => {
      requests.push(request.url!);
      const [, name, file] = new URL(request.url!, 'http://x').pathname.split('/');
      try {
        response
          .writeHead(200, { 'Content-Type': 'application/octet-stream' })
          .end(readFileSync(join(work, name!, file!)));
      } catch {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('tokenizer.vocab: refused from a directory, over HTTP and as bytes; nothing outside is read or fetched', async () => {
    const found: string[] = [];
    for (const [i, name] of ESCAPES.entries()) {
      const label = JSON.stringify(name);
      const dir = variant(`vocab-${i}`, (m) => {
        m.tokenizer.vocab = name;
        // What an attacker would write: the entry for the outside file, even with its real hash.
        m.files[name] = { sha256: secretSha, bytes: SECRET.length };
      });
      found.push(
        ...problems(
          await outcome(createFillMask({ model: dir, backend: 'wasm' })),
          'tokenizer.vocab',
          `directory ${label}`,
        ),
      );
      requests.length = 0;
      found.push(
        ...problems(
          await outcome(createFillMask({ model: `${origin}/vocab-${i}/`, backend: 'wasm' })),
          'tokenizer.vocab',
          `HTTP ${label}`,
        ),
      );
      // model.json only: no other request, on this host or another.
      if (requests.join() !== `/vocab-${i}/model.json`) found.push(`HTTP ${label}: requested ${requests.join(', ')}`);
      const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
      const bytes = {
        manifest,
        modelBytes: readFileSync(join(dir, 'model.onnx')),
        vocabBytes: readFileSync(join(testModelDir(), 'vocab.txt')),
      };
      found.push(
        ...problems(
          await outcome(createFillMask({ model: bytes, backend: 'wasm' })),
          'tokenizer.vocab',
          `bytes ${label}`,
        ),
      );
    }
    expect(found).toEqual([]);
  });

  test('memory.file: refused the same way', async () => {
    const found: string[] = [];
    for (const [i, name] of ['../secret.txt', '//other-host/x', '.\t.', '/etc/passwd'].entries()) {
      const label = JSON.stringify(name);
      variant(
        `memory-${i}`,
        (m) => {
          m.memory.file = name;
          m.files[name] = { sha256: secretSha, bytes: SECRET.length };
        },
        testMemoryModelDir(),
      );
      found.push(
        ...problems(
          await outcome(createFillMask({ model: join(work, `memory-${i}`), backend: 'wasm' })),
          'memory.file',
          `directory ${label}`,
        ),
      );
      requests.length = 0;
      found.push(
        ...problems(
          await outcome(createFillMask({ model: `${origin}/memory-${i}/`, backend: 'wasm' })),
          'memory.file',
          `HTTP ${label}`,
        ),
      );
      if (requests.join() !== `/memory-${i}/model.json`) found.push(`HTTP ${label}: requested ${requests.join(', ')}`);
    }
    expect(found).toEqual([]);
  });

  test('a name listed for two roles, or model.json itself, is refused; plain names still load', async () => {
    const twice = variant(
      'twice',
      (m) => {
        m.memory.file = 'vocab.txt';
      },
      testMemoryModelDir(),
    );
    expect(await outcome(createFillMask({ model: twice, backend: 'wasm' }))).toMatchObject({
      code: 'BAD_MODEL',
      message: expect.stringMatching(/memory\.file names "vocab\.txt", which tokenizer\.vocab already names/),
    });
    const manifestItself = variant('manifest-itself', (m) => {
      m.tokenizer.vocab = 'model.json';
    });
    expect(await outcome(createFillMask({ model: manifestItself, backend: 'wasm' }))).toMatchObject({
      code: 'BAD_MODEL',
      message: expect.stringMatching(/tokenizer\.vocab is "model\.json", which is not a file name inside/),
    });
    // A renamed vocabulary with an ordinary name still works (hash from the file).
    const renamed = variant('renamed', (m) => {
      m.files['vocab-v2_zh.txt'] = m.files['vocab.txt'];
      delete m.files['vocab.txt'];
      m.tokenizer.vocab = 'vocab-v2_zh.txt';
    });
    copyFileSync(join(renamed, 'vocab.txt'), join(renamed, 'vocab-v2_zh.txt'));
    expect(await outcome(createFillMask({ model: renamed, backend: 'wasm' }))).toEqual({
      code: 'resolved',
      message: '',
    });
  });
});
