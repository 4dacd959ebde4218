/** A model given as bytes (bundled by an app, read from IndexedDB, transferred to the Worker). */
import { TiankongError } from '../errors.js';
import type { ModelBytes } from '../types.js';
import { type LoadModelOptions, type LoadedModel, type ModelReader, loadModel } from './load.js';
import { checkManifest } from './manifest.js';

/** True for a model given as bytes rather than a location. */
export function isModelBytes(source: unknown): source is ModelBytes {
  return typeof source === 'object' && source !== null && !(source instanceof URL) && 'modelBytes' in source;
}

function asBytes(data: Uint8Array | ArrayBuffer | undefined, what: string): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  throw new TiankongError('BAD_OPTION', `tiankong: model.${what} must be a Uint8Array or an ArrayBuffer`);
}

/** Checks a model given as bytes with the same steps as a downloaded one (progress source "memory"). */
export function loadModelFromBytes(model: ModelBytes, options: LoadModelOptions = {}): Promise<LoadedModel> {
  const field = {
    'vocab.txt': 'vocabBytes',
    'model.onnx': 'modelBytes',
    'memory.bin': 'memoryBytes',
    'memory-ngrams.bin': 'memoryNgramsBytes',
    'head.bin': 'headBytes',
  } as const;
  const reader: ModelReader = {
    source: 'memory',
    kind: 'memory',
    hasMemory: model.memoryBytes !== undefined,
    manifest: async () => checkManifest(model.manifest, 'model.manifest'),
    read: async (file, onBytes) => {
      const bytes = asBytes(model[field[file.role]], field[file.role]);
      onBytes(bytes.byteLength, bytes.byteLength);
      return bytes;
    },
    where: (file) => `model.${field[file.role]}`,
  };
  return loadModel(reader, options);
}
