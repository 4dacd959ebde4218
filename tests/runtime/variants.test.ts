// ModelSession.variants (web/src/engine/session.ts, the built dist/): several copies of one text,
// each with other positions masked and other positions scored, in batched ONNX Runtime runs —
// checked variant by variant against an independent reference: the same model.onnx run on that
// variant alone (batch 1) in onnxruntime-node, a core model's embeddings and output layer read from
// head.bin and computed in float64 here (head-reference.ts). Models: the tiny checkpoint exported
// in each float32-compute form, both graph builders × both graph kinds (torch core fp16-weights,
// torch mask-only fp32, lean core int8-weights, lean mask-only fp16-weights), the shipped default
// model, and the dynamic-INT8 test models, which must still get isolated runs (a batch would share
// one activation scale: shown here to change their numbers). Also occlusion (explain) batched vs
// one variant at a time.
import { execFileSync } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ModelSession as Session } from '../../web/src/engine/session.js';
import { readVocab } from '../../model/tooling/hf-reference-tokenizer.mjs';
import { createSession, runLogits } from '../../model/tooling/ort-session.mjs';
import { distDir, missingPrerequisite, repoRoot, testModelDir } from './fixtures.js';
import { type ParsedHead, embedRows, projectRows, readHead } from './head-reference.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);
const DEFAULT_MODEL = join(repoRoot, 'model', 'default');
const hasDefaultModel = existsSync(join(DEFAULT_MODEL, 'model.onnx'));

/**
 * |batched − isolated reference| per logit. The reference may differ by float32 rounding of the
 * encoder (a kernel may block a [batch·seq] matrix differently from a [seq] one) and, for core
 * models, by the float64 projection here vs the core's float32 one. Measured on these inputs: 0 for
 * mask-only graphs on onnxruntime-node, ≤ 1e-7 for core graphs there, ≤ 3e-7 on wasm (tiny models,
 * logits ≤ 0.63); ≤ 5.5e-6 on the default model (logits up to 25, the projection). A mixed-up
 * variant or position is off by far more: the tiny models' logits differ by ~1e-2 between inputs.
 */
const TOLERANCE = { tiny: 2e-6, default: 1e-4 };

/**
 * |batched − one-by-one| per occlusion score, both through the package (same session, same
 * projection). Measured: 0 (bit-identical) on both runtimes, on these inputs; the bound allows
 * float32 rounding. The tiny model's scores are ~1e-4, the default model's ~0.01–4.
 */
const OCCLUSION_TOLERANCE = { tiny: 1e-6, default: 1e-5 };

const dist = <T>(path: string): Promise<T> => import(pathToFileURL(join(distDir, path)).href);

interface Opened {
  session: Session;
  manifest: any;
  vocab: string[];
  dispose(): Promise<void>;
}

/** A ModelSession as the engine builds it (no memory), on onnxruntime-node ('auto') or onnxruntime-web ('wasm'). */
async function openSession(dir: string, backend: 'auto' | 'wasm' = 'auto'): Promise<Opened> {
  const [{ createNodeRuntime, loadModelDirectory }, { loadEngineCore }, { ModelSession }] = await Promise.all([
    dist<typeof import('../../web/src/node.js')>('node.js'),
    dist<typeof import('../../web/src/core/engine-core.js')>('core/engine-core.js'),
    dist<typeof import('../../web/src/engine/session.js')>('engine/session.js'),
  ]);
  const runtime = await createNodeRuntime({ backend, threads: 1 });
  const model = await loadModelDirectory(dir, { memory: false });
  const core = await loadEngineCore();
  const session = await ModelSession.create(runtime, model, core.module);
  return {
    session,
    manifest: model.manifest,
    vocab: readVocab(join(dir, 'vocab.txt')),
    dispose: async () => {
      await session.release();
      core.dispose();
    },
  };
}

/** The reference: one onnxruntime-node run per variant (or, to show what batching does, one for all). */
class Isolated {
  private constructor(
    private readonly handle: any,
    private readonly head: ParsedHead | null,
  ) {}

  static async create(dir: string, manifest: any): Promise<Isolated> {
    const handle = await createSession(join(dir, 'model.onnx'), 'node', 1);
    return new Isolated(handle, manifest.logits === 'core' ? readHead(join(dir, manifest.head.file)) : null);
  }

  /** Logit rows (float64) of each variant, all in one run of batch `variants.length`. */
  async batch(variants: { ids: Int32Array; positions: Int32Array }[]): Promise<Float64Array[][]> {
    const rows = variants.map((v) => Array.from(v.ids));
    const n = variants[0]!.positions.length;
    const { dims, data } = await runLogits(this.handle, {
      attention_mask: rows.map((r) => r.map(() => 1)),
      token_type_ids: rows.map((r) => r.map(() => 0)),
      mask_positions: variants.map((v) => Array.from(v.positions)),
      ...(this.head ? { inputs_embeds: rows.map((r) => embedRows(this.head!, r)) } : { input_ids: rows }),
    } as Record<string, number[][]>);
    const width = dims[2]!;
    return variants.map((_, b) => {
      const own = data.subarray(b * n * width, (b + 1) * n * width);
      if (this.head) return projectRows(this.head, own, n);
      return Array.from({ length: n }, (_, r) => Float64Array.from(own.subarray(r * width, (r + 1) * width)));
    });
  }

  async one(variant: { ids: Int32Array; positions: Int32Array }): Promise<Float64Array[]> {
    return (await this.batch([variant]))[0]!;
  }
}

/** `chars` ids of a fixed text ([CLS] … [SEP]) in `vocab` (unknown characters → [UNK]). */
function textIds(opened: Opened, chars: number): Int32Array {
  const { cls, sep, unk } = opened.manifest.special_tokens;
  const text = '春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。床前明月光，疑是地上霜。举头望明月，低头思故乡。';
  const idOf = new Map(opened.vocab.map((token, id) => [token, id]));
  const body = Array.from({ length: chars }, (_, i) => idOf.get([...text][i % [...text].length]!) ?? unk);
  return Int32Array.from([cls, ...body, sep]);
}

/**
 * `count` variants of `ids`: variant k has [MASK] at one position and is scored at two (that one
 * and another), every variant at other positions.
 */
function maskedVariants(ids: Int32Array, count: number, mask: number): { ids: Int32Array; positions: Int32Array }[] {
  const content = ids.length - 2;
  return Array.from({ length: count }, (_, k) => {
    const at = 1 + ((k * 5) % content);
    const copy = ids.slice();
    copy[at] = mask;
    return { ids: copy, positions: Int32Array.of(at, 1 + ((k * 3 + 1) % content)) };
  });
}

/** Largest |ours − reference| over every variant's rows. */
function worstDifference(ours: Float32Array[], reference: Float64Array[][], vocab: number): number {
  let worst = 0;
  ours.forEach((logits, v) => {
    expect(logits.length).toBe(reference[v]!.length * vocab);
    reference[v]!.forEach((row, r) => {
      for (let i = 0; i < vocab; i++) worst = Math.max(worst, Math.abs(logits[r * vocab + i]! - row[i]!));
    });
  });
  return worst;
}

/** The tiny test checkpoint exported in float32-compute forms, cached beside the test model. */
const FORMS = {
  'torch core, fp16-weights': ['--graph', 'core', '--fp16-weights'],
  'torch mask-only, fp32': ['--fp32'],
  'lean core, int8-weights': ['--graph', 'core', '--lean', '--int8-weights'],
  'lean mask-only, fp16-weights': ['--lean', '--fp16-weights'],
} as const;
type Form = keyof typeof FORMS;

function exportedForm(form: Form): string {
  const root = dirname(testModelDir());
  const dir = join(root, `variants-${form.replace(/[^a-z0-9]+/g, '-')}`);
  if (existsSync(join(dir, 'model.json'))) return dir;
  const temp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  execFileSync(
    join(repoRoot, 'scripts', 'export-model'),
    ['--name', 'tiny-random', ...FORMS[form], join(root, 'checkpoint'), temp],
    { stdio: 'pipe' },
  );
  try {
    renameSync(temp, dir);
  } catch {
    rmSync(temp, { recursive: true, force: true }); // another process won the race
  }
  return dir;
}

describe.skipIf(missing !== null)('ModelSession.variants', () => {
  const dirs = {} as Record<Form, string>;
  beforeAll(() => {
    for (const form of Object.keys(FORMS) as Form[]) dirs[form] = exportedForm(form);
  });

  for (const form of Object.keys(FORMS) as Form[]) {
    for (const backend of ['auto', 'wasm'] as const) {
      test(`${form} (${backend === 'auto' ? 'onnxruntime-node' : 'wasm'}): batched runs equal isolated reference runs`, async () => {
        const opened = await openSession(dirs[form], backend);
        try {
          const { session, manifest } = opened;
          expect(session.batchable).toBe(true);
          const reference = await Isolated.create(dirs[form], manifest);
          const variants = maskedVariants(textIds(opened, 14), 10, manifest.special_tokens.mask);
          const vocab = manifest.architecture.vocab_size;
          const expected = await Promise.all(variants.map((v) => reference.one(v)));
          const runs = session.runs;
          session.maxBatch = 4; // 10 variants: runs of 4, 4 and 2
          expect(worstDifference(await session.variants(variants), expected, vocab)).toBeLessThanOrEqual(
            TOLERANCE.tiny,
          );
          expect(session.runs - runs).toBe(3);
          // 16 per run, but at most maxBatchTokens (default: max_length, 128) tokens: 8 + 2 of 16 tokens.
          session.maxBatch = 16;
          expect(session.maxBatchTokens).toBe(manifest.max_length);
          expect(worstDifference(await session.variants(variants), expected, vocab)).toBeLessThanOrEqual(
            TOLERANCE.tiny,
          );
          expect(session.runs - runs).toBe(5);
          // No token cap: all ten in one run.
          session.maxBatchTokens = Infinity;
          expect(worstDifference(await session.variants(variants), expected, vocab)).toBeLessThanOrEqual(
            TOLERANCE.tiny,
          );
          expect(session.runs - runs).toBe(6);
        } finally {
          await opened.dispose();
        }
      });
    }
  }

  test.skipIf(!hasDefaultModel)(
    'the default model (core, int8-weights computed in fp32): batched equals isolated',
    async () => {
      const opened = await openSession(DEFAULT_MODEL);
      try {
        const { session, manifest } = opened;
        expect(manifest.quantization.scheme).toBe('int8-weights'); // stored int8, computed in float32: batchable
        expect(session.batchable).toBe(true);
        expect(session.maxBatchTokens).toBe(manifest.window.threshold); // a fill's longest run: 128 tokens
        const reference = await Isolated.create(DEFAULT_MODEL, manifest);
        const variants = maskedVariants(textIds(opened, 20), 6, manifest.special_tokens.mask);
        session.maxBatch = 4;
        const runs = session.runs;
        const ours = await session.variants(variants);
        expect(session.runs - runs).toBe(2);
        const expected = await Promise.all(variants.map((v) => reference.one(v)));
        expect(worstDifference(ours, expected, manifest.architecture.vocab_size)).toBeLessThanOrEqual(
          TOLERANCE.default,
        );
      } finally {
        await opened.dispose();
      }
    },
  );

  test.skipIf(!hasDefaultModel)('an input long enough for windows: one logits() per variant', async () => {
    const opened = await openSession(DEFAULT_MODEL);
    try {
      const { session, manifest } = opened;
      expect(manifest.window.threshold).toBeLessThan(140);
      const ids = textIds(opened, 140);
      const variants = maskedVariants(ids, 3, manifest.special_tokens.mask).map((v, k) => ({
        ids: v.ids,
        positions: Int32Array.of(10 + k, 12 + k), // close together: one window each
      }));
      const runs = session.runs;
      const ours = await session.variants(variants);
      expect(session.runs - runs).toBe(3);
      for (const [v, variant] of variants.entries()) {
        expect(ours[v]).toEqual(await session.logits(variant.ids, variant.positions));
      }
    } finally {
      await opened.dispose();
    }
  });

  for (const kind of ['mask-only', 'core'] as const) {
    test(`a dynamic-INT8 model (${kind}) still gets isolated runs`, async () => {
      const dir = join(dirname(testModelDir()), kind);
      const opened = await openSession(dir);
      try {
        const { session, manifest } = opened;
        expect(manifest.quantization.scheme).toBe('int8-dynamic-per-channel');
        expect(session.batchable).toBe(false);
        const reference = await Isolated.create(dir, manifest);
        const variants = maskedVariants(textIds(opened, 14), 6, manifest.special_tokens.mask);
        session.maxBatch = 4;
        const runs = session.runs;
        let checkpoints = 0;
        const ours = await session.variants(variants, () => void checkpoints++);
        expect([session.runs - runs, checkpoints]).toEqual([6, 6]);
        const vocab = manifest.architecture.vocab_size;
        const expected = await Promise.all(variants.map((v) => reference.one(v)));
        // Same runtime, same run: equal but for the reference's float64 projection (core).
        expect(worstDifference(ours, expected, vocab)).toBeLessThanOrEqual(kind === 'core' ? 1e-5 : 0);
        // What a batch would have given: one activation scale for all, other numbers.
        const batched = await reference.batch(variants);
        expect(worstDifference(ours, batched, vocab)).toBeGreaterThan(1e-3);
      } finally {
        await opened.dispose();
      }
    });
  }

  test('variants of different lengths are rejected before anything runs; empty is no run', async () => {
    const opened = await openSession(dirs['torch mask-only, fp32']);
    try {
      const { session, manifest } = opened;
      const ids = textIds(opened, 8);
      const mask = manifest.special_tokens.mask;
      const [a, b] = maskedVariants(ids, 2, mask);
      const runs = session.runs;
      let checkpoints = 0;
      const count = () => void checkpoints++;
      await expect(session.variants([a!, { ids: textIds(opened, 9), positions: b!.positions }], count)).rejects.toThrow(
        /variant 1 has 11 ids and 2 positions, variant 0 has 10 and 2; .*same lengths/,
      );
      await expect(session.variants([a!, { ids: b!.ids, positions: Int32Array.of(1) }], count)).rejects.toThrow(
        /variant 1 has 10 ids and 1 positions/,
      );
      expect(await session.variants([], count)).toEqual([]);
      expect([session.runs - runs, checkpoints]).toEqual([0, 0]);
    } finally {
      await opened.dispose();
    }
  });

  test('beforeRun is awaited before every run; a throw stops the rest', async () => {
    const opened = await openSession(dirs['lean core, int8-weights']);
    try {
      const { session, manifest } = opened;
      const variants = maskedVariants(textIds(opened, 10), 7, manifest.special_tokens.mask);
      session.maxBatch = 3;
      let runs = session.runs;
      let checkpoints = 0;
      await session.variants(variants, async () => {
        expect(session.runs - runs).toBe(checkpoints); // before the run, not after
        checkpoints++;
      });
      expect([session.runs - runs, checkpoints]).toEqual([3, 3]);
      runs = session.runs;
      checkpoints = 0;
      const stop = async () => {
        if (++checkpoints === 2) throw new Error('cancelled');
      };
      await expect(session.variants(variants, stop)).rejects.toThrow('cancelled');
      expect(session.runs - runs).toBe(1);
    } finally {
      await opened.dispose();
    }
  });
});

describe.skipIf(missing !== null)('occlusion (explain) on batched variants', () => {
  let explain: typeof import('../../web/src/engine/explain.js');
  const opened: Opened[] = [];
  beforeAll(async () => {
    explain = await dist('engine/explain.js');
  });
  // (one wasm thread count per process: every wasm session here has 1)
  afterAll(async () => {
    await Promise.all(opened.map((o) => o.dispose()));
  });

  const models = [
    ['the tiny lean core model', () => exportedForm('lean core, int8-weights'), OCCLUSION_TOLERANCE.tiny],
    ...(hasDefaultModel ? [['the default model', () => DEFAULT_MODEL, OCCLUSION_TOLERANCE.default] as const] : []),
  ] as const;
  for (const [name, dir, tolerance] of models) {
    for (const backend of ['auto', 'wasm'] as const) {
      test(`${name} (${backend === 'auto' ? 'onnxruntime-node' : 'wasm'}): the same scores as one run per variant`, async () => {
        const o = await openSession(dir(), backend);
        opened.push(o);
        const { session, manifest } = o;
        const mask = manifest.special_tokens.mask;
        const vocab = manifest.architecture.vocab_size;
        const ids = textIds(o, 18);
        ids[7] = mask;
        ids[12] = mask; // a second mask: scored null, not occluded
        const candidate = o.vocab.indexOf('月');
        // One variant at a time through logits(), what explain did before.
        let isolatedRuns = 0;
        const oneByOne = async (batch: readonly { ids: Int32Array; positions: Int32Array }[]) => {
          const out: Float32Array[] = [];
          for (const v of batch) {
            isolatedRuns++;
            out.push(await session.logits(v.ids, v.positions));
          }
          return out;
        };
        const before = await explain.occlude(oneByOne, ids, 7, candidate, mask, vocab);
        session.maxBatch = 8;
        session.maxBatchTokens = Infinity;
        const runs = session.runs;
        let checkpoints = 0;
        const after = await explain.occlude(
          (batch, beforeRun) => session.variants(batch, beforeRun),
          ids,
          7,
          candidate,
          mask,
          vocab,
          () => void checkpoints++,
          session.maxBatch,
        );
        expect(isolatedRuns).toBe(17); // the text + 16 non-mask tokens
        expect([session.runs - runs, checkpoints]).toEqual([3, 3]); // 8 + 8 + 1 variants
        expect(after.scores.map((s) => s === null)).toEqual(before.scores.map((s) => s === null));
        expect(after.scores.filter((s) => s === null).length).toBe(2);
        expect(Math.abs(after.logProb - before.logProb)).toBeLessThanOrEqual(tolerance);
        after.scores.forEach((s, i) => {
          if (s !== null) expect(Math.abs(s - before.scores[i]!), `token ${i}`).toBeLessThanOrEqual(tolerance);
        });
        // The scores are far larger than the tolerance (a shifted or mixed-up variant would show).
        expect(Math.max(...after.scores.map((s) => Math.abs(s ?? 0)))).toBeGreaterThan(100 * tolerance);
      });
    }
  }
});
