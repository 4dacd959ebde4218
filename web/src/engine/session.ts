/**
 * The ONNX Runtime side of the engine: the structural view of the ORT API that onnxruntime-web
 * (browser Worker, Node) and onnxruntime-node (Node) both satisfy, the session for a model (its
 * graph checked against model.json), and one run of the mask-only graph (int64 feeds → logits).
 * Platform code (node.ts, worker.ts) builds the InferenceRuntime; the engine only uses it.
 */
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
  Tensor: new (type: 'int64', data: BigInt64Array, dims: readonly number[]) => OrtTensor;
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
const KNOWN_INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids', 'mask_positions']);

/**
 * Creates the session for `model` and checks its graph against model.json: the declared inputs,
 * mask_positions in, logits out. Throws BAD_MODEL (the session is released first).
 */
export async function createSession(runtime: InferenceRuntime, model: LoadedModel): Promise<OrtSession> {
  let session: OrtSession;
  try {
    session = await runtime.ort.InferenceSession.create(model.modelBytes, runtime.sessionOptions);
  } catch (error) {
    throw new TiankongError('BAD_MODEL', `tiankong: ${model.source}: model.onnx cannot be loaded by ONNX Runtime ` +
      `(${runtime.backend}): ${describe(error)}`);
  }
  try {
    checkGraph(session, model);
  } catch (error) {
    await session.release().catch(() => undefined);
    throw error;
  }
  return session;
}

function checkGraph(session: OrtSession, model: LoadedModel): void {
  const declared = [...model.manifest.inputs].sort().join(', ');
  const actual = [...session.inputNames].sort().join(', ');
  if (declared !== actual) {
    throw new TiankongError('BAD_MODEL', `tiankong: ${model.source}: model.onnx has inputs [${actual}] but model.json ` +
      `declares [${declared}]; re-export the model`);
  }
  const unknown = session.inputNames.filter((name) => !KNOWN_INPUTS.has(name));
  if (unknown.length > 0 || !session.inputNames.includes('mask_positions') || !session.outputNames.includes('logits')) {
    throw new TiankongError('BAD_MODEL', `tiankong: ${model.source}: model.onnx must take input_ids, attention_mask, ` +
      `[token_type_ids,] mask_positions and return logits (the mask-only export); it has inputs [${actual}] and ` +
      `outputs [${session.outputNames.join(', ')}]`);
  }
}

/**
 * One run of the mask-only graph on one sequence (call it inside the engine's queue: a session
 * runs one request at a time). Returns the `logits` output as it came (check it with
 * checkLogits); a failed run is BAD_MODEL.
 */
export async function runSession(ort: OrtModule, session: OrtSession, ids: Int32Array,
  maskPositions: Int32Array): Promise<OrtTensor | undefined> {
  const seq = ids.length;
  const feeds: Record<string, OrtTensor> = {};
  for (const name of session.inputNames) {
    if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, seq]);
    else if (name === 'attention_mask') feeds[name] = new ort.Tensor('int64', new BigInt64Array(seq).fill(1n), [1, seq]);
    else if (name === 'token_type_ids') feeds[name] = new ort.Tensor('int64', new BigInt64Array(seq), [1, seq]);
    else feeds[name] = new ort.Tensor('int64', BigInt64Array.from(maskPositions, BigInt), [1, maskPositions.length]);
  }
  try {
    return (await session.run(feeds))['logits'];
  } catch (error) {
    throw new TiankongError('BAD_MODEL', `tiankong: ONNX Runtime failed to run the model: ${describe(error)}`);
  }
}

/** The logits of a run as [nMasks, vocabSize] float32 values; any other shape or type is BAD_MODEL. */
export function checkLogits(logits: OrtTensor | undefined, nMasks: number, vocabSize: number): Float32Array {
  if (!logits || !(logits.data instanceof Float32Array) || logits.dims.join() !== `1,${nMasks},${vocabSize}`) {
    throw new TiankongError('BAD_MODEL', `tiankong: the model returned logits of shape [${logits?.dims.join(', ')}], ` +
      `expected [1, ${nMasks}, ${vocabSize}] (float32) for ${nMasks} mask(s)`);
  }
  return logits.data;
}
