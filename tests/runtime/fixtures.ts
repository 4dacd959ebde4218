// Shared by the tests/runtime suites. They test the BUILT package (dist/, bin/) against
// independent references: ONNX Runtime (onnxruntime-node, or onnxruntime-web's wasm backend
// for the wasm path) running the same model.onnx on ids from HF `tokenizers` (npm), with a
// plain JS softmax/top-k.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readVocab, referenceTokenizer } from '../../model/tooling/hf-reference-tokenizer.mjs';
import { createSession, runLogits } from '../../model/tooling/ort-session.mjs';
import { type ParsedHead, embedRows, projectRows, readHead } from './head-reference.js';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const distDir = join(repoRoot, 'dist');
export const cliPath = join(repoRoot, 'bin', 'tiankong.js');
const PYTHON = '/usr/bin/python3';

const BUILD_FILES = ['index.js', 'browser.js', 'worker.js', 'core/load-core.js', 'core/wasm/tiankong-core.wasm'];

/** Why the runtime suites cannot run here, or null. */
export function missingPrerequisite(): string | null {
  const absent = BUILD_FILES.filter((f) => !existsSync(join(distDir, f)));
  if (absent.length)
    return `runtime build missing (dist/${absent.join(', dist/')}): run scripts/build (or scripts/build-wasm && scripts/build-js)`;
  if (!existsSync(PYTHON)) return `${PYTHON} (torch + onnx) not found: cannot generate the test model`;
  return null;
}

/** The built Node entry, typed by its sources. */
export async function api(): Promise<typeof import('../../web/src/index.js')> {
  return import(pathToFileURL(join(distDir, 'index.js')).href);
}

/** The code and message a promise rejects with; throws when it resolves instead. */
export async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return { code: (error as { code: string }).code, message: (error as Error).message };
  }
  throw new Error('expected a rejection');
}

/**
 * The tiny INT8 mask-only test model (scripts/make-test-model, seeded), generated once into
 * .cache/test-model/<hash of the model pipeline sources>/ and reused. Parallel test files
 * race safely: each generates into its own temp dir and renames it into place.
 */
export function testModelDir(): string {
  const hash = createHash('sha256');
  const sources = [
    join(repoRoot, 'scripts', 'make-test-model'),
    join(repoRoot, 'scripts', 'export-model'),
    join(repoRoot, 'scripts', 'make-random-checkpoint'),
    join(repoRoot, 'scripts', 'build-memory'),
    ...readdirSync(join(repoRoot, 'tests', 'fixtures', 'data', 'corpus'))
      .sort()
      .map((f) => join(repoRoot, 'tests', 'fixtures', 'data', 'corpus', f)),
    join(repoRoot, 'tests', 'fixtures', 'data', 'idioms', 'idioms.csv'),
    // The memory file format and builder (and the pinyin table its idiom readings depend on).
    ...readdirSync(join(repoRoot, 'wasm', 'src'))
      .filter(
        (f) => /^(memory|ngram_table|text_index|text_readings|pinyin)[a-z_]*\.(cc|h)$/.test(f) && !f.includes('_test'),
      )
      .sort()
      .map((f) => join(repoRoot, 'wasm', 'src', f)),
    ...readdirSync(join(repoRoot, 'model', 'tiankong_model'))
      .filter((f) => f.endsWith('.py'))
      .sort()
      .map((f) => join(repoRoot, 'model', 'tiankong_model', f)),
  ];
  for (const file of sources) hash.update(readFileSync(file));
  const root = join(repoRoot, '.cache', 'test-model', hash.digest('hex').slice(0, 16));
  const dir = join(root, 'mask-only');
  if (existsSync(join(dir, 'model.json'))) return dir;
  const temp = `${root}.tmp-${process.pid}-${Date.now()}`;
  mkdirSync(dirname(root), { recursive: true });
  execFileSync('nice', [join(repoRoot, 'scripts', 'make-test-model'), temp], { stdio: 'pipe' });
  try {
    renameSync(temp, root);
  } catch {
    rmSync(temp, { recursive: true, force: true }); // another process won the race
  }
  return dir;
}

/**
 * The tiny test model with a corpus memory built from tests/fixtures/data (famous texts such as
 * 静夜思, some idioms): the memory's famous-line and idiom hits dominate the random model.
 */
export function testMemoryModelDir(): string {
  return join(dirname(testModelDir()), 'with-memory');
}

/**
 * A tiny random model with bert-base-chinese's vocabulary (21 128 tokens, ids 100-103 for the
 * specials) and a memory built for that vocabulary from the fixtures: the memory of any
 * exported BERT, not only the default model's character vocabulary.
 */
export function bertVocabMemoryModelDir(): string {
  const dir = join(dirname(testModelDir()), 'bert-vocab');
  if (existsSync(join(dir, 'memory.bin'))) return dir;
  const temp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  const script = `
import sys
sys.path.insert(0, ${JSON.stringify(join(repoRoot, 'model'))})
from pathlib import Path
from tiankong_model.checkpoint import save_checkpoint
from tiankong_model.random_checkpoint import random_model, architecture_vocab
vocab = architecture_vocab('bert-base-chinese')
save_checkpoint(random_model('tiny', len(vocab), seed=0), vocab, Path(sys.argv[1]))
`;
  execFileSync(PYTHON, ['-c', script, join(temp, 'checkpoint')], { stdio: 'pipe' });
  execFileSync(
    join(repoRoot, 'scripts', 'export-model'),
    ['--name', 'tiny-bert-vocab', join(temp, 'checkpoint'), join(temp, 'model')],
    { stdio: 'pipe' },
  );
  const fixtures = join(repoRoot, 'tests', 'fixtures', 'data');
  const corpus = join(temp, 'corpus.txt');
  execFileSync('bash', ['-c', `cat "${fixtures}"/corpus/*.txt > "${corpus}"`]);
  execFileSync(
    join(repoRoot, 'scripts', 'build-memory'),
    [join(temp, 'model'), '--corpus', corpus, '--max-ngrams', '200000', '--words', 'none', '--collocations', 'none'],
    { stdio: 'pipe', env: { ...process.env, TIANKONG_DATA: fixtures } },
  );
  try {
    renameSync(join(temp, 'model'), dir);
  } catch {
    // another process won the race
  }
  rmSync(temp, { recursive: true, force: true });
  return dir;
}

/** The tiny model opened by both references and both backends, as most runtime suites need it. */
export interface TinyModelSetup {
  dir: string;
  /** onnxruntime-node on the same model.onnx. */
  ref: Reference;
  /** onnxruntime-web's wasm backend (2 threads), to compare the wasm path exactly. */
  refWeb: Reference;
  /** The package on onnxruntime-node ('auto'), 1 thread. */
  native: import('../../web/src/index.js').FillMaskModel;
  /** The package on onnxruntime-web's wasm, 2 threads. */
  wasm: import('../../web/src/index.js').FillMaskModel;
  dispose(): Promise<void>;
}

/** Opens the tiny test model in both references and both backends (call dispose() in afterAll). */
export async function openTinyModel(): Promise<TinyModelSetup> {
  const dir = testModelDir();
  const { createFillMask } = await api();
  const [ref, refWeb, native, wasm] = await Promise.all([
    Reference.create(dir),
    Reference.create(dir, 'web', 2),
    createFillMask({ model: dir, backend: 'auto', threads: 1 }),
    createFillMask({ model: dir, backend: 'wasm', threads: 2 }),
  ]);
  return {
    dir,
    ref,
    refWeb,
    native,
    wasm,
    dispose: async () => void (await Promise.all([native.dispose(), wasm.dispose()])),
  };
}

export interface ReferenceCandidate {
  id: number;
  token: string;
  p: number;
}

/** The reference pipeline: HF tokenizer ids → onnxruntime-node → softmax per mask row. */
export class Reference {
  private constructor(
    private readonly vocab: string[],
    private readonly tokenizer: any,
    private readonly ort: any,
    private readonly maskId: number,
    private readonly head: ParsedHead | null, // a core model's output layer, read independently
  ) {}

  /**
   * `runtime`: 'node' = onnxruntime-node; 'web' = onnxruntime-web's wasm backend, needed to check
   * the wasm path exactly: the two runtimes' INT8 kernels differ (logits by up to ~0.15 on the
   * random test model), so only the same runtime gives identical numbers.
   */
  static async create(modelDir: string, runtime: 'node' | 'web' = 'node', threads = 1): Promise<Reference> {
    const manifest = JSON.parse(readFileSync(join(modelDir, 'model.json'), 'utf8'));
    const vocab: string[] = readVocab(join(modelDir, 'vocab.txt'));
    const tokenizer = referenceTokenizer(vocab, { lowercase: manifest.tokenizer.lowercase });
    const ort = await createSession(join(modelDir, 'model.onnx'), runtime, threads);
    const head = manifest.logits === 'core' ? readHead(join(modelDir, manifest.head.file)) : null;
    return new Reference(vocab, tokenizer, ort, manifest.special_tokens.mask, head);
  }

  /** Logit rows (float64) at `positions` of one sequence, one run (batch 1); a core model's head in float64 here. */
  private async logitRows(ids: number[], positions: number[]): Promise<Float64Array[]> {
    const feeds = {
      attention_mask: [ids.map(() => 1)],
      token_type_ids: [ids.map(() => 0)],
      mask_positions: [positions],
      ...(this.head ? { inputs_embeds: [embedRows(this.head, ids)] } : { input_ids: [ids] }),
    };
    const { dims, data } = await runLogits(this.ort, feeds as Record<string, number[][]>);
    if (this.head) return projectRows(this.head, data, positions.length);
    const v = dims[2]!;
    return positions.map((_, r) => Float64Array.from(data.subarray(r * v, (r + 1) * v)));
  }

  async encode(text: string): Promise<number[]> {
    return (await this.encodeFull(text)).ids;
  }

  /** HF's tokens, ids and offsets (converted from code points, what npm reports, to UTF-16). */
  async encodeFull(text: string): Promise<{ tokens: string[]; ids: number[]; offsets: [number, number][] }> {
    const encoding = await this.tokenizer.encode(text);
    const utf16At: number[] = [];
    let unit = 0;
    for (const char of text) {
      utf16At.push(unit);
      unit += char.length;
    }
    utf16At.push(unit);
    return {
      tokens: encoding.getTokens(),
      ids: encoding.getIds(),
      offsets: encoding.getOffsets().map(([s, e]: [number, number]) => [utf16At[s]!, utf16At[e]!]),
    };
  }

  /** Full probability rows (softmax over the vocabulary) at each mask of `text`. */
  async probabilities(text: string): Promise<Float64Array[]> {
    const ids = await this.encode(text);
    const masks = ids.flatMap((id, i) => (id === this.maskId ? [i] : []));
    return (await this.logitRows(ids, masks)).map((row) => softmax(row));
  }

  /** log softmax rows (float64) at `positions` of one sequence of token ids, one run (batch 1). */
  async logSoftmaxRows(ids: number[], positions: number[]): Promise<Float64Array[]> {
    return (await this.logitRows(ids, positions)).map((row) => softmax(row).map(Math.log));
  }

  get maskTokenId(): number {
    return this.maskId;
  }

  tokenId(token: string): number {
    return this.vocab.indexOf(token);
  }

  /** Tokens a mask may be filled with: not special, not [unusedN], not a ## piece. */
  eligible(id: number): boolean {
    const token = this.vocab[id]!;
    return (
      !['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].includes(token) &&
      !/^\[unused\d+\]$/.test(token) &&
      !(token.startsWith('##') && token.length > 2)
    );
  }

  token(id: number): string {
    return this.vocab[id]!;
  }

  /** Reference top-k of one row among ids accepted by `keep`, by probability desc then id asc. */
  topK(row: Float64Array, k: number, keep: (id: number) => boolean = () => true): ReferenceCandidate[] {
    const ids = Array.from(row.keys()).filter((id) => this.eligible(id) && keep(id));
    ids.sort((a, b) => row[b]! - row[a]! || a - b);
    return ids.slice(0, k).map((id) => ({ id, token: this.vocab[id]!, p: row[id]! }));
  }
}

export function softmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]!);
  const out = new Float64Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += out[i] = Math.exp(logits[i]! - max);
  for (let i = 0; i < out.length; i++) out[i]! /= sum;
  return out;
}
