/**
 * The ONNX Runtime side of the engine: the structural view of the ORT API that onnxruntime-web
 * (browser Worker, Node) and onnxruntime-node (Node) both satisfy, and the model session: its
 * graph checked against model.json, and `logits(ids, masks)`, one answer for both graph kinds —
 * "mask-only" (int64 ids in, logits at the masks out) and "core" (the C++ core's output layer
 * gathers the input embeddings from head.bin, ONNX Runtime computes the hidden states at the
 * masks, the core multiplies them by the tied table) — and for long inputs read through windows
 * around the masks (model.json "window").
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

/** One model, ready to give logits at masks (call it inside the engine's queue: one run at a time). */
export class ModelSession {
  /** Model runs so far (windows count one each). */
  runs = 0;

  private constructor(
    private readonly ort: OrtModule,
    private readonly session: OrtSession,
    private readonly head: WasmOutputLayer | null,
    private readonly vocabSize: number,
    private readonly window: WindowSettings | null,
    private readonly special: { cls: number; sep: number },
  ) {}

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
      return new ModelSession(runtime.ort, session, head, manifest.architecture.vocab_size, manifest.window ?? null, {
        cls,
        sep,
      });
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
      return this.run(ids, maskPositions);
    }
    const out = new Float32Array(maskPositions.length * this.vocabSize);
    for (const { start, end, masks } of windows) {
      const windowIds = new Int32Array(end - start + 2);
      windowIds[0] = this.special.cls;
      windowIds.set(ids.subarray(start, end), 1);
      windowIds[windowIds.length - 1] = this.special.sep;
      const logits = await this.run(
        windowIds,
        Int32Array.from(masks, (m) => maskPositions[m]! - start + 1),
      );
      masks.forEach((m, row) =>
        out.set(logits.subarray(row * this.vocabSize, (row + 1) * this.vocabSize), m * this.vocabSize),
      );
    }
    return out;
  }

  /** Frees the ONNX Runtime session and the output layer. */
  async release(): Promise<void> {
    this.head?.delete();
    await this.session.release().catch(() => undefined);
  }

  /** One run on one sequence: logits at `maskPositions`. */
  private async run(ids: Int32Array, maskPositions: Int32Array): Promise<Float32Array> {
    const { ort, session, head } = this;
    const seq = ids.length;
    const feeds: Record<string, OrtTensor> = {};
    for (const name of session.inputNames) {
      if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, seq]);
      else if (name === 'inputs_embeds')
        feeds[name] = new ort.Tensor('float32', head!.embed(ids), [1, seq, head!.hiddenSize()]);
      else if (name === 'attention_mask')
        feeds[name] = new ort.Tensor('int64', new BigInt64Array(seq).fill(1n), [1, seq]);
      else if (name === 'token_type_ids') feeds[name] = new ort.Tensor('int64', new BigInt64Array(seq), [1, seq]);
      else feeds[name] = new ort.Tensor('int64', BigInt64Array.from(maskPositions, BigInt), [1, maskPositions.length]);
    }
    let outputs: Record<string, OrtTensor>;
    try {
      outputs = await session.run(feeds);
    } catch (error) {
      throw new TiankongError('BAD_MODEL', `tiankong: ONNX Runtime failed to run the model: ${describe(error)}`);
    }
    this.runs++;
    const n = maskPositions.length;
    if (!head) return checkOutput(outputs['logits'], 'logits', n, this.vocabSize);
    const hidden = checkOutput(outputs['hidden'], 'hidden', n, head.hiddenSize());
    try {
      return head.logits(hidden, n);
    } catch (error) {
      throw new TiankongError(
        'BAD_MODEL',
        `tiankong: the model returned unusable hidden states (${describe(error)}); ` +
          'the model file is broken — re-export it',
      );
    }
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

/** A run's output as [n, width] float32 values; any other shape or type is BAD_MODEL. */
function checkOutput(tensor: OrtTensor | undefined, name: string, n: number, width: number): Float32Array {
  if (!tensor || !(tensor.data instanceof Float32Array) || tensor.dims.join() !== `1,${n},${width}`) {
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: the model returned ${name} of shape [${tensor?.dims.join(', ')}], ` +
        `expected [1, ${n}, ${width}] (float32) for ${n} mask(s)`,
    );
  }
  return tensor.data;
}
