/**
 * Loading a model, in one pass for every source: read model.json → check it → read each file it
 * lists (vocab, model, and memory.bin when wanted) → verify each against its size and sha256.
 * Sources only read bytes: url.ts (HTTP, with Cache Storage as a store), bytes.ts (in memory),
 * and Node's directories (node.ts).
 */
import { throwIfAborted } from '../errors.js';
import type { LoadProgress, ModelManifest } from '../types.js';
import { type ListedFile, listedFiles, matchesFile, verifyFile } from './manifest.js';

/** A model in memory, verified against its manifest. */
export interface LoadedModel {
  manifest: ModelManifest;
  modelBytes: Uint8Array;
  vocabBytes: Uint8Array;
  /** The corpus memory's bytes, when the manifest lists one and it was wanted. */
  memoryBytes?: Uint8Array;
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
 * output layer side by side (several MB each). Each file comes from `store` when it holds a copy that still
 * verifies, else from the reader; what the reader returns is verified (INTEGRITY otherwise) and
 * then kept in `store`. Throws TiankongError (BAD_MODEL, INTEGRITY, NETWORK, ABORTED, BAD_OPTION).
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
  const head = files.find((f) => f.role === 'head.bin');
  const vocabBytes = await load(vocab!);
  const [modelBytes, memoryBytes, headBytes] = await Promise.all([
    load(model!),
    memory ? load(memory) : undefined,
    head ? load(head) : undefined,
  ]);
  return {
    manifest,
    modelBytes,
    vocabBytes,
    ...(memoryBytes ? { memoryBytes } : {}),
    ...(headBytes ? { headBytes } : {}),
    source: reader.source,
  };
}
