/**
 * The ONNX Runtime side of the engine: the structural view of the ORT API that onnxruntime-web
 * (browser Worker, Node) and onnxruntime-node (Node) both satisfy, and the model session: its
 * graph checked against model.json, and `logits(ids, masks)`, one answer for both graph kinds —
 * "mask-only" (int64 ids in, logits at the masks out) and "core" (the C++ core's output layer
 * gathers the input embeddings from head.bin, ONNX Runtime computes the hidden states at the
 * masks, the core multiplies them by the tied table) — and for long inputs read through windows
 * around the masks (model.json "window"). `variants(batch)` scores several same-length inputs
 * (one text with different tokens masked, different output positions) as one batched run.
 * Platform code (node.ts, worker.ts) builds the InferenceRuntime; the engine only uses it.
 */
import type { CoreModule, WasmOutputLayer } from '../core/core-module.js';
import { TiankongError, describe } from '../errors.js';
import type { LoadedModel } from '../model/load.js';

export interface OrtTensor {
  readonly dims: readonly number[];
  readonly data: unknown;
}

export interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}

export interface OrtModule {
  Tensor: {
    new (type: 'int64', data: BigInt64Array, dims: readonly number[]): OrtTensor;
    new (type: 'float32', data: Float32Array, dims: readonly number[]): OrtTensor;
  };
  InferenceSession: { create(model: Uint8Array, options?: Record<string, unknown>): Promise<OrtSession> };
}

/** The inference runtime the engine drives, plus what was chosen and why (for stats()). */
export interface InferenceRuntime {
  ort: OrtModule;
  /** Options for InferenceSession.create (execution providers, threads). */
  sessionOptions: Record<string, unknown>;
  backend: 'wasm' | 'webgpu' | 'native';
  backendReason: string;
  threads: number;
  threadsReason: string;
}

/** The graph inputs tiankong knows how to feed. */
const KNOWN_INPUTS = new Set(['input_ids', 'inputs_embeds', 'attention_mask', 'token_type_ids', 'mask_positions']);

/** How a model session reads an input: the whole of it, or windows around the masks when long. */
export interface WindowSettings {
  /** Inputs of more than this many tokens (with [CLS] and [SEP]) are read through windows. */
  threshold: number;
  /** Tokens per window, [CLS] and [SEP] included. */
  size: number;
  /** Inputs of up to this many tokens are read whole when their windows would read more tokens. */
  whole_up_to?: number;
}

/**
 * model.json "quantization.scheme"s whose graphs compute in float32: "none" (fp32), "fp16-weights"
 * and "int8-weights" (weights stored small, widened to float32 when the session starts). Their rows
 * do not interact, so a batched run gives every variant what its own run gives (within float32
 * rounding: kernels may block a larger matrix differently). Not "int8-dynamic-per-channel" (nor any
 * unknown scheme): DynamicQuantizeLinear picks one activation scale per tensor, i.e. per batch, so a
 * variant's numbers would depend on the others in its batch.
 */
const FLOAT32_COMPUTE_SCHEMES: ReadonlySet<string> = new Set(['none', 'fp16-weights', 'int8-weights']);

/**
 * Most variants per batched run (ModelSession.maxBatch), chosen from bench/variants-bench.mjs
 * (bench/results/variants.json, docs/lean-graph.md; the default model in onnxruntime-web's wasm
 * build in Node, 16 and 40 characters, 1 and 2 threads, token cap lifted): the time per variant
 * falls with the batch size up to 16 (1.15–1.45× of batch 1's at 1 thread, 1.4–2.0× at 2) and
 * little further at 1 thread (32: 1.2–1.45×); 32 only helped at 2 threads, where a run of 32
 * 40-character variants took over half a second. In practice `maxBatchTokens` binds first for
 * all but short texts (128 tokens: 7 variants of 16 characters, 3 of 40).
 */
export const DEFAULT_MAX_BATCH = 16;

/** One input of ModelSession.variants: encoded ids ([CLS] … [SEP]) and the positions to score. */
export interface Variant {
  ids: Int32Array;
  positions: Int32Array;
}

/** What the engine gets logits from: the model (ModelSession) or, for a preview, none (NoModelLogits). */
export interface LogitsSource {
  /** Model runs so far. */
  readonly runs: number;
  /** Most variants one batched run of `variants` takes. */
  readonly maxBatch: number;
  logits(ids: Int32Array, maskPositions: Int32Array): Promise<Float32Array>;
  variants(batch: readonly Variant[], beforeRun?: () => Promise<void> | void): Promise<Float32Array[]>;
  release(): Promise<void>;
}

/**
 * The logits of a preview that has no model yet: all zero, so a decoder whose fusion gives the
 * model no weight (decoding.ts: MEMORY_ALONE_FUSION) ranks by the corpus memory alone. No runs.
 */
export class NoModelLogits implements LogitsSource {
  readonly runs = 0;
  readonly maxBatch = DEFAULT_MAX_BATCH;
  constructor(private readonly vocabSize: number) {}
  async logits(_ids: Int32Array, maskPositions: Int32Array): Promise<Float32Array> {
    return new Float32Array(maskPositions.length * this.vocabSize);
  }
  async variants(batch: readonly Variant[], beforeRun: () => Promise<void> | void = () => undefined) {
    const out: Float32Array[] = [];
    for (const { ids, positions } of batch) {
      await beforeRun();
      out.push(await this.logits(ids, positions));
    }
    return out;
  }
  async release(): Promise<void> {}
}

/** One model, ready to give logits at masks (call it inside the engine's queue: one run at a time). */
export class ModelSession implements LogitsSource {
  /** Model runs so far (windows count one each, a batched run of variants one). */
  runs = 0;
  /** Most variants one batched run of `variants` takes (≥ 1; 1 = one run per variant). */
  maxBatch = DEFAULT_MAX_BATCH;
  /**
   * Most tokens one batched run reads (variants × their length; a longer variant runs alone).
   * Default: the longest input a fill reads in one run — model.json window threshold (or
   * whole_up_to), else max_length — so a batched run lasts no longer than a fill's longest run
   * and cancellation between runs answers as soon as it does for fills.
   */
  maxBatchTokens: number;

  private constructor(
    private readonly ort: OrtModule,
    private readonly session: OrtSession,
    private readonly head: WasmOutputLayer | null,
    private readonly vocabSize: number,
    private readonly window: WindowSettings | null,
    private readonly special: { cls: number; sep: number },
    /** The graph computes in float32 (FLOAT32_COMPUTE_SCHEMES): variants may share a run. */
    readonly batchable: boolean,
    longestRun: number,
  ) {
    this.maxBatchTokens = longestRun;
  }

  /**
   * Creates the session for `model` and checks its graph against model.json (inputs, outputs)
   * and, for a "core" model, its output layer against the vocabulary and hidden size. Throws
   * BAD_MODEL (what was built is released first).
   */
  static async create(runtime: InferenceRuntime, model: LoadedModel, module: CoreModule): Promise<ModelSession> {
    const { manifest } = model;
    let head: WasmOutputLayer | null = null;
    let session: OrtSession | undefined;
    try {
      if (manifest.logits === 'core') {
        try {
          head = new module.OutputLayer(model.headBytes!, manifest.architecture.vocab_size);
        } catch (error) {
          throw new TiankongError(
            'BAD_MODEL',
            `tiankong: ${model.source}: ${manifest.head!.file}: ${describe(error).replace(
              /^OutputLayer: /,
              '',
            )}; re-export the model (scripts/export-model --graph core)`,
          );
        }
        const hidden = manifest.architecture['hidden_size'];
        if (hidden !== undefined && hidden !== head.hiddenSize()) {
          throw new TiankongError(
            'BAD_MODEL',
            `tiankong: ${model.source}: ${manifest.head!.file} has ${head.hiddenSize()}-wide ` +
              `rows but model.json says hidden_size ${String(hidden)}; the files do not belong together`,
          );
        }
      }
      try {
        session = await runtime.ort.InferenceSession.create(model.modelBytes, runtime.sessionOptions);
      } catch (error) {
        throw new TiankongError(
          'BAD_MODEL',
          `tiankong: ${model.source}: model.onnx cannot be loaded by ONNX Runtime ` +
            `(${runtime.backend}): ${describe(error)}`,
        );
      }
      checkGraph(session, model);
      const { cls, sep } = manifest.special_tokens;
      const scheme = (manifest['quantization'] as { scheme?: unknown } | undefined)?.scheme;
      return new ModelSession(
        runtime.ort,
        session,
        head,
        manifest.architecture.vocab_size,
        manifest.window ?? null,
        { cls, sep },
        typeof scheme === 'string' && FLOAT32_COMPUTE_SCHEMES.has(scheme),
        manifest.window ? Math.max(manifest.window.threshold, manifest.window.whole_up_to ?? 0) : manifest.max_length,
      );
    } catch (error) {
      head?.delete();
      await session?.release().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Logits [maskPositions.length, vocab] at the given positions of one encoded input ([CLS] ...
   * [SEP]). A long input (window settings) is read through windows of `size` tokens, each centred
   * on a group of nearby masks; every mask's logits come from the window that holds it best —
   * unless the windows would read more tokens than the input has and it is no longer than
   * `whole_up_to`: then one run over the whole input is cheaper.
   */
  async logits(ids: Int32Array, maskPositions: Int32Array): Promise<Float32Array> {
    const windows =
      this.window && ids.length > this.window.threshold
        ? planWindows(ids.length, maskPositions, this.window.size)
        : null;
    const windowTokens = windows?.reduce((sum, w) => sum + w.end - w.start + 2, 0) ?? 0;
    if (!windows || (ids.length <= (this.window!.whole_up_to ?? 0) && windowTokens > ids.length)) {
      return (await this.run([{ ids, positions: maskPositions }]))[0]!;
    }
    const out = new Float32Array(maskPositions.length * this.vocabSize);
    for (const { start, end, masks } of windows) {
      const windowIds = new Int32Array(end - start + 2);
      windowIds[0] = this.special.cls;
      windowIds.set(ids.subarray(start, end), 1);
      windowIds[windowIds.length - 1] = this.special.sep;
      const [logits] = await this.run([
        { ids: windowIds, positions: Int32Array.from(masks, (m) => maskPositions[m]! - start + 1) },
      ]);
      masks.forEach((m, row) =>
        out.set(logits!.subarray(row * this.vocabSize, (row + 1) * this.vocabSize), m * this.vocabSize),
      );
    }
    return out;
  }

  /**
   * Logits [positions.length, vocab] of every variant (in order): several inputs of one length,
   * each with its own positions (all of one count) — e.g. one text with a different token masked
   * in each — scored in batched runs of up to `maxBatch` variants and `maxBatchTokens` tokens
   * (`runs` counts one per run).
   * A graph that quantizes activations at run time (dynamic INT8: one scale per batch) and an input
   * long enough for windows get one `logits` call per variant instead, so every variant's numbers
   * are what its own run gives: exactly on those models, within float32 rounding on the batched
   * ones. `beforeRun` is awaited before every run (or every variant's `logits`): the engine's
   * cancellation checkpoint. Variants of different lengths are a caller's bug: throws an Error.
   */
  async variants(
    batch: readonly Variant[],
    beforeRun: () => Promise<void> | void = () => undefined,
  ): Promise<Float32Array[]> {
    if (batch.length === 0) return [];
    const { ids: first, positions: firstPositions } = batch[0]!;
    batch.forEach(({ ids, positions }, v) => {
      if (ids.length !== first.length || positions.length !== firstPositions.length) {
        throw new Error(
          `ModelSession.variants: variant ${v} has ${ids.length} ids and ${positions.length} positions, ` +
            `variant 0 has ${first.length} and ${firstPositions.length}; the variants of one call must ` +
            'have the same lengths (one batched run)',
        );
      }
    });
    const out: Float32Array[] = [];
    const windowed = this.window !== null && first.length > this.window.threshold;
    const size =
      this.batchable && !windowed
        ? Math.max(1, Math.min(Math.floor(this.maxBatch), Math.floor(this.maxBatchTokens / first.length)))
        : 1;
    if (size === 1) {
      for (const { ids, positions } of batch) {
        await beforeRun();
        out.push(await this.logits(ids, positions));
      }
      return out;
    }
    for (let start = 0; start < batch.length; start += size) {
      await beforeRun();
      out.push(...(await this.run(batch.slice(start, start + size))));
    }
    return out;
  }

  /** Frees the ONNX Runtime session and the output layer. */
  async release(): Promise<void> {
    this.head?.delete();
    await this.session.release().catch(() => undefined);
  }

  /**
   * One run on `batch.length` sequences of one length (batch dimension; every row's attention mask
   * all ones, so nothing is padded): per sequence, logits [positions.length, vocab] at its positions.
   */
  private async run(batch: readonly Variant[]): Promise<Float32Array[]> {
    const { ort, session, head } = this;
    const b = batch.length;
    const seq = batch[0]!.ids.length;
    const n = batch[0]!.positions.length;
    const int64 = (values: (v: Variant) => ArrayLike<number>, width: number) => {
      const data = new BigInt64Array(b * width);
      batch.forEach((variant, row) => data.set(Array.from(values(variant), BigInt), row * width));
      return new ort.Tensor('int64', data, [b, width]);
    };
    const feeds: Record<string, OrtTensor> = {};
    for (const name of session.inputNames) {
      if (name === 'input_ids') feeds[name] = int64((v) => v.ids, seq);
      else if (name === 'inputs_embeds')
        feeds[name] = new ort.Tensor('float32', this.embed(batch), [b, seq, head!.hiddenSize()]);
      else if (name === 'attention_mask')
        feeds[name] = new ort.Tensor('int64', new BigInt64Array(b * seq).fill(1n), [b, seq]);
      else if (name === 'token_type_ids') feeds[name] = new ort.Tensor('int64', new BigInt64Array(b * seq), [b, seq]);
      else feeds[name] = int64((v) => v.positions, n);
    }
    let outputs: Record<string, OrtTensor>;
    try {
      outputs = await session.run(feeds);
    } catch (error) {
      throw new TiankongError('BAD_MODEL', `tiankong: ONNX Runtime failed to run the model: ${describe(error)}`);
    }
    this.runs++;
    if (!head) {
      const logits = checkOutput(outputs['logits'], 'logits', b, n, this.vocabSize);
      if (b === 1) return [logits];
      const rows = n * this.vocabSize;
      return batch.map((_, v) => logits.slice(v * rows, (v + 1) * rows));
    }
    const width = head.hiddenSize();
    const hidden = checkOutput(outputs['hidden'], 'hidden', b, n, width);
    try {
      // One variant at a time: the core's product is row by row anyway, and its output buffer
      // stays one variant's size.
      return batch.map((_, v) => head.logits(hidden.subarray(v * n * width, (v + 1) * n * width), n));
    } catch (error) {
      throw new TiankongError(
        'BAD_MODEL',
        `tiankong: the model returned unusable hidden states (${describe(error)}); ` +
          'the model file is broken — re-export it',
      );
    }
  }

  /** The input embeddings [batch.length, seq, hidden] of a "core" model's batch (the C++ core gathers them). */
  private embed(batch: readonly Variant[]): Float32Array {
    const head = this.head!;
    if (batch.length === 1) return head.embed(batch[0]!.ids);
    const size = batch[0]!.ids.length * head.hiddenSize();
    const out = new Float32Array(batch.length * size);
    batch.forEach(({ ids }, v) => out.set(head.embed(ids), v * size));
    return out;
  }
}

/** A window [start, end) of content positions (into the input's ids) and the masks (indices) it answers. */
export interface PlannedWindow {
  start: number;
  end: number;
  masks: number[];
}

/**
 * Windows of `size` tokens ([CLS] and [SEP] included) over an input of `length` ids that cover
 * every mask: masks are grouped left to right while a group's span fits in a window with room
 * for context, and each window is centred on its group (shifted to stay inside the text).
 */
export function planWindows(length: number, maskPositions: Int32Array, size: number): PlannedWindow[] {
  const body = size - 2;
  const contentStart = 1,
    contentEnd = length - 1; // without [CLS] and [SEP]
  const order = Array.from(maskPositions.keys()).sort((a, b) => maskPositions[a]! - maskPositions[b]!);
  const margin = Math.floor(body / 4); // context kept on each side of a group
  const windows: PlannedWindow[] = [];
  let group: number[] = [];
  const flush = () => {
    if (!group.length) return;
    const first = maskPositions[group[0]!]!,
      last = maskPositions[group[group.length - 1]!]!;
    const centre = Math.floor((first + last + 1) / 2);
    const start = Math.max(contentStart, Math.min(centre - Math.floor(body / 2), contentEnd - body));
    windows.push({ start, end: Math.min(contentEnd, start + body), masks: group });
    group = [];
  };
  for (const m of order) {
    if (group.length && maskPositions[m]! - maskPositions[group[0]!]! + 1 > body - 2 * margin) flush();
    group.push(m);
  }
  flush();
  return windows;
}

function checkGraph(session: OrtSession, model: LoadedModel): void {
  const declared = [...model.manifest.inputs].sort().join(', ');
  const actual = [...session.inputNames].sort().join(', ');
  if (declared !== actual) {
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: ${model.source}: model.onnx has inputs [${actual}] but model.json ` +
        `declares [${declared}]; re-export the model`,
    );
  }
  const core = model.manifest.logits === 'core';
  const output = core ? 'hidden' : 'logits';
  const first = core ? 'inputs_embeds' : 'input_ids';
  const unknown = session.inputNames.filter((name) => !KNOWN_INPUTS.has(name));
  if (
    unknown.length > 0 ||
    !session.inputNames.includes('mask_positions') ||
    !session.inputNames.includes(first) ||
    !session.outputNames.includes(output)
  ) {
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: ${model.source}: model.onnx must take ${first}, attention_mask, ` +
        `[token_type_ids,] mask_positions and return ${output} (the ${model.manifest.logits} export); it has inputs ` +
        `[${actual}] and outputs [${session.outputNames.join(', ')}]`,
    );
  }
}

/** A run's output as [batch, n, width] float32 values; any other shape or type is BAD_MODEL. */
function checkOutput(
  tensor: OrtTensor | undefined,
  name: string,
  batch: number,
  n: number,
  width: number,
): Float32Array {
  if (!tensor || !(tensor.data instanceof Float32Array) || tensor.dims.join() !== `${batch},${n},${width}`) {
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: the model returned ${name} of shape [${tensor?.dims.join(', ')}], ` +
        `expected [${batch}, ${n}, ${width}] (float32) for ${batch} input(s) of ${n} mask(s)`,
    );
  }
  return tensor.data;
}
