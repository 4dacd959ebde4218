/**
 * The inference runtime the engine drives: a structural view of the ONNX Runtime API that
 * onnxruntime-web (browser Worker, Node) and onnxruntime-node (Node) both satisfy, plus what
 * was chosen and why. Platform code (node.ts, worker.ts) builds one; engine.ts only uses it.
 */
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

export interface InferenceRuntime {
  ort: OrtModule;
  /** Options for InferenceSession.create (execution providers, threads). */
  sessionOptions: Record<string, unknown>;
  backend: 'wasm' | 'webgpu' | 'native';
  backendReason: string;
  threads: number;
  threadsReason: string;
}

/** Default thread count for `cores` logical CPUs: more than 4 rarely helps a batch-1 BERT. */
export function defaultThreads(cores: number): number {
  return Math.max(1, Math.min(4, cores));
}
