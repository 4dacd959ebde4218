/**
 * Loading a model, in one pass for every source: read model.json → check it → read each file it
 * lists (vocab, model, and memory.bin — both parts when split — when wanted) → verify each against its size and sha256 →
 * compare the sizes model.json states with the ones the files state (checkSizes).
 * Sources only read bytes: url.ts (HTTP, with Cache Storage as a store), bytes.ts (in memory),
 * and Node's directories (node.ts).
 */
import { TiankongError, throwIfAborted } from '../errors.js';
import type { LoadProgress, ModelManifest } from '../types.js';
import { type ListedFile, listedFiles, matchesFile, verifyFile } from './manifest.js';
import { type GraphTable, graphShapes, longestInput } from './onnx-graph.js';

/** A model in memory, verified against its manifest. */
export interface LoadedModel {
  manifest: ModelManifest;
  modelBytes: Uint8Array;
  vocabBytes: Uint8Array;
  /** The corpus memory's bytes, when the manifest lists one and it was wanted. */
  memoryBytes?: Uint8Array;
  /** A split memory's second part (manifest.memory.ngrams), with memoryBytes. */
  memoryNgramsBytes?: Uint8Array;
  /** The output layer's bytes (head.bin) of a "core" model. */
  headBytes?: Uint8Array;
  /** Where it came from, for messages and stats. */
  source: string;
}

export interface LoadModelOptions {
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
  /** Load the corpus memory when the manifest lists one (default true). */
  memory?: boolean;
  /**
   * For a split memory: called with the vocabulary and the memory's first part (verified) before
   * the model's files are read, and awaited, so a preview can answer from them while the rest
   * downloads. It should not throw (a failure there rejects the load).
   */
  onMemoryFirst?: (early: EarlyFiles) => Promise<void> | void;
}

/** What a split memory's preview needs, read first (LoadModelOptions.onMemoryFirst). */
export interface EarlyFiles {
  manifest: ModelManifest;
  vocabBytes: Uint8Array;
  memoryBytes: Uint8Array;
  source: string;
}

/** Reports how many of `total` bytes of a file have arrived. */
export type OnBytes = (loaded: number, total: number) => void;

/** Where a model's files come from. Readers read; checking and verifying is load.ts's job. */
export interface ModelReader {
  /** Names the model in messages and stats (a directory, a URL, "memory"). */
  readonly source: string;
  /** Where the bytes come from, for progress events. */
  readonly kind: LoadProgress['source'];
  /** Reads model.json and returns it checked (parseManifest / checkManifest); `onBytes` when it was read as a file. */
  manifest(onBytes: OnBytes, signal?: AbortSignal): Promise<ModelManifest>;
  /** False when the source has no memory file even if model.json lists one (bytes given without memoryBytes). */
  readonly hasMemory?: boolean;
  /** The file's bytes, unverified. */
  read(file: ListedFile, onBytes: OnBytes, signal?: AbortSignal): Promise<Uint8Array>;
  /** How the file is named in messages (its path or URL). */
  where(file: ListedFile): string;
}

/** A content-addressed store of verified files (Cache Storage in browsers, see cache-storage.ts). */
export interface FileStore {
  /** The stored copy of this exact version, or null. */
  get(file: ListedFile): Promise<Uint8Array | null>;
  /** Keeps a verified file; never throws (a full disk only means downloading again next time). */
  put(file: ListedFile, bytes: Uint8Array): Promise<void>;
  /** Drops a stored copy that turned out corrupt. */
  drop(file: ListedFile): Promise<void>;
}

/**
 * Loads a model from `reader`: model.json, then the vocabulary, then the model, the memory and the
 * output layer side by side (several MB each) — with `onMemoryFirst` and a split memory, its first
 * part before the others. Each file comes from `store` when it holds a copy that still
 * verifies, else from the reader; what the reader returns is verified (INTEGRITY otherwise) and
 * then kept in `store` (a verified file is a true copy even when checkSizes then refuses the
 * model). Throws TiankongError (BAD_MODEL, INTEGRITY, NETWORK, ABORTED, BAD_OPTION).
 */
export async function loadModel(
  reader: ModelReader,
  options: LoadModelOptions = {},
  store: FileStore | null = null,
): Promise<LoadedModel> {
  const { signal } = options;
  const progress =
    (file: LoadProgress['file'], source: LoadProgress['source']): OnBytes =>
    (loaded, total) =>
      options.onProgress?.({ file, loaded, total, source });
  throwIfAborted(signal);
  const manifest = await reader.manifest(progress('model.json', reader.kind), signal);
  const load = async (file: ListedFile): Promise<Uint8Array> => {
    throwIfAborted(signal);
    const stored = await store?.get(file);
    if (stored) {
      // Re-verify: storage can be corrupted or evicted halfway; then read it again.
      if (await matchesFile(file, stored)) {
        progress(file.role, 'cache')(file.bytes, file.bytes);
        return stored;
      }
      await store!.drop(file);
    }
    const bytes = await reader.read(file, progress(file.role, reader.kind), signal);
    await verifyFile(file, bytes, reader.where(file));
    await store?.put(file, bytes);
    return bytes;
  };
  const files = listedFiles(manifest, options.memory !== false && reader.hasMemory !== false);
  const [vocab, model] = files;
  const memory = files.find((f) => f.role === 'memory.bin');
  const memoryNgrams = files.find((f) => f.role === 'memory-ngrams.bin');
  const head = files.find((f) => f.role === 'head.bin');
  const vocabBytes = await load(vocab!);
  let early: Uint8Array | undefined;
  if (memory && memoryNgrams && options.onMemoryFirst) {
    early = await load(memory);
    await options.onMemoryFirst({ manifest, vocabBytes, memoryBytes: early, source: reader.source });
  }
  const [modelBytes, memoryBytes, memoryNgramsBytes, headBytes] = await Promise.all([
    load(model!),
    early ?? (memory ? load(memory) : undefined),
    memoryNgrams ? load(memoryNgrams) : undefined,
    head ? load(head) : undefined,
  ]);
  const loaded: LoadedModel = {
    manifest,
    modelBytes,
    vocabBytes,
    ...(memoryBytes ? { memoryBytes } : {}),
    ...(memoryNgramsBytes ? { memoryNgramsBytes } : {}),
    ...(headBytes ? { headBytes } : {}),
    source: reader.source,
  };
  checkSizes(loaded);
  return loaded;
}

/** One file's statement of a size: `says` is the phrase a message quotes ("model.json says …"). */
interface SizeClaim {
  value: number;
  says: string;
}

/** head.bin's header (see wasm/src/output_layer.cc), or null when it is not one this reader knows. */
function headHeader(bytes: Uint8Array): { dtype: string | undefined; vocab: number; hidden: number } | null {
  if (bytes.byteLength < 32 || new TextDecoder().decode(bytes.subarray(0, 8)) !== 'TKOUTPUT') return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, 32);
  if (view.getUint32(8, true) !== 1) return null; // another version: the core says which
  const dtype = ({ 1: 'int8', 2: 'f32', 3: 'f16' } as Record<number, string>)[view.getUint32(12, true)];
  return { dtype, vocab: view.getUint32(16, true), hidden: view.getUint32(20, true) };
}

/** memory.bin's vocabulary size (see wasm/src/memory_format.h), or null when it is not a header this reader knows. */
function memoryVocabSize(bytes: Uint8Array): number | null {
  if (bytes.byteLength < 40 || new TextDecoder().decode(bytes.subarray(0, 8)) !== 'TKMEMORY') return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, 40);
  return view.getUint32(8, true) === 1 ? view.getUint32(32, true) : null;
}

/**
 * Compares the sizes model.json states with the ones its files state once they are read and
 * verified: model.onnx's tables (onnx-graph.ts: positions, hidden width, vocabulary rows, layers),
 * head.bin's header (vocabulary rows, row width, table type) and memory.bin's (vocabulary size).
 * A file that does not show a size (an unrecognised graph, an unknown header version) is left to
 * the code that reads it, which has its own message. Files that verify against model.json but
 * disagree with it come from different exports (or model.json was edited): nothing would run
 * right, so this throws BAD_MODEL naming both numbers and both files. Reads only; changes nothing.
 */
export function checkSizes(model: LoadedModel): void {
  const { manifest, source } = model;
  const fail = (a: string, b: string, fix: string): never => {
    throw new TiankongError('BAD_MODEL', `tiankong: ${source}: ${a} but ${b}; ${fix}`);
  };
  const agree = (claims: (SizeClaim | null)[], fix: string) => {
    const known = claims.filter((c): c is SizeClaim => c !== null);
    for (const claim of known.slice(1)) if (claim.value !== known[0]!.value) fail(known[0]!.says, claim.says, fix);
  };
  const declared = (field: string): SizeClaim | null => {
    const value = manifest.architecture[field];
    return typeof value === 'number' ? { value, says: `model.json says architecture.${field} is ${value}` } : null;
  };
  const reExport = 'the files are from different models: export them together (scripts/export-model)';
  const graph = graphShapes(model.modelBytes);
  const shape = (t: GraphTable) => `model.onnx's ${t.name} [${t.rows}, ${t.width}]`;
  const { positions, words, outputBias, layers } = graph ?? {};
  const head = manifest.logits === 'core' && model.headBytes ? headHeader(model.headBytes) : null;
  const headFile = manifest.head?.file;
  agree(
    [
      declared('hidden_size'),
      positions ? { value: positions.width, says: `${shape(positions)} is ${positions.width} wide` } : null,
      words ? { value: words.width, says: `${shape(words)} is ${words.width} wide` } : null,
      head ? { value: head.hidden, says: `${headFile} holds ${head.hidden}-wide rows` } : null,
    ],
    reExport,
  );
  agree(
    [
      declared('vocab_size'),
      words ? { value: words.rows, says: `${shape(words)} has ${words.rows} rows, one per token` } : null,
      outputBias
        ? { value: outputBias.size, says: `model.onnx's ${outputBias.name} has ${outputBias.size} entries` }
        : null,
      head ? { value: head.vocab, says: `${headFile} holds ${head.vocab} vocabulary rows` } : null,
    ],
    reExport,
  );
  agree(
    [
      declared('max_position_embeddings'),
      positions ? { value: positions.rows, says: `${shape(positions)} has ${positions.rows} positions` } : null,
    ],
    reExport,
  );
  agree(
    [
      declared('num_hidden_layers'),
      layers
        ? { value: layers, says: `model.onnx has weights for ${layers} layers (layer.0 … layer.${layers - 1})` }
        : null,
    ],
    reExport,
  );
  if (head?.dtype !== undefined && head.dtype !== manifest.head!.dtype) {
    fail(
      `model.json says head.dtype is "${manifest.head!.dtype}"`,
      `${headFile} holds a ${head.dtype} table`,
      reExport,
    );
  }
  // Without a position table in the graph, model.json's own max_position_embeddings bounds the
  // inputs (with one, the engine compares the inputs with the graph: checkPositionTable).
  const table = declared('max_position_embeddings');
  const longest = longestInput(manifest);
  if (!positions && table && longest.length > table.value) {
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: ${source}: model.json's ${longest.field} is longer than the model was built for ` +
        `(architecture.max_position_embeddings is ${table.value}); set max_length to at most ${table.value}`,
    );
  }
  const memoryVocab = model.memoryBytes ? memoryVocabSize(model.memoryBytes) : null;
  if (memoryVocab !== null && memoryVocab !== manifest.architecture.vocab_size) {
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: ${source}: ${manifest.memory!.file} was built for another vocabulary (${memoryVocab} tokens) ` +
        `than the model's (model.json says architecture.vocab_size is ${manifest.architecture.vocab_size}); ` +
        'rebuild it for this model (scripts/build-memory) or load the model without it: createFillMask({ memory: false })',
    );
  }
}
