/** Node only: resolving a model argument to a local directory or URL, and reading a model directory. */
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TiankongError, describe, throwIfAborted } from './errors.js';
import { MANIFEST_FILE, MODEL_FILE, parseManifest, verifyFile } from './manifest.js';
import {
  type LoadModelOptions, type LoadedModel, isModelBytes, loadModelFromBytes, loadModelFromUrl, wantedMemoryFile,
} from './model-source.js';
import type { LoadProgress, ModelSource } from './types.js';

/** The model shipped with the package (model/default/ at the package root), if installed. */
export const DEFAULT_MODEL_DIR = fileURLToPath(new URL('../model/default/', import.meta.url));

/** Loads a model from any source Node supports; `undefined` means the packaged default model. */
export async function loadModelInNode(source: ModelSource | undefined, options: LoadModelOptions): Promise<LoadedModel> {
  if (source === undefined) {
    if (!(await isDirectory(DEFAULT_MODEL_DIR))) {
      throw new TiankongError('BAD_MODEL', `tiankong: no model given and the default model is not installed at ` +
        `${DEFAULT_MODEL_DIR}; pass the model directory (createFillMask({ model: DIR }), CLI: --model DIR)`);
    }
    return loadModelDirectory(DEFAULT_MODEL_DIR, options);
  }
  if (isModelBytes(source)) return loadModelFromBytes(source, options);
  const url = source instanceof URL ? source : /^[a-z][a-z\d+.-]+:\/\//i.test(source) ? new URL(source) : null;
  if (url === null) return loadModelDirectory(resolve(source as string), options);
  if (url.protocol === 'file:') return loadModelDirectory(fileURLToPath(url), options);
  if (url.protocol === 'http:' || url.protocol === 'https:') return loadModelFromUrl(url, options);
  throw new TiankongError('UNSUPPORTED', `tiankong: cannot load a model from ${url.href}: use a directory, a file:, http: or https: URL`);
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isDirectory(), () => false);
}

/** Reads DIR/model.json and the files it lists, verifying each against its size and sha256. */
export async function loadModelDirectory(dir: string, options: LoadModelOptions = {}): Promise<LoadedModel> {
  if (!(await isDirectory(dir))) {
    throw new TiankongError('BAD_MODEL', `tiankong: model directory ${dir} does not exist; pass the folder written by scripts/export-model`);
  }
  const read = async (file: string, progressFile: LoadProgress['file']): Promise<Uint8Array> => {
    throwIfAborted(options.signal);
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await readFile(join(dir, file)));
    } catch (error) {
      throw new TiankongError('BAD_MODEL', `tiankong: cannot read ${join(dir, file)}: ${describe(error)}; ` +
        'a model directory holds model.json, model.onnx and vocab.txt, and memory.bin when model.json lists it ' +
        '(scripts/export-model and scripts/build-memory write them; createFillMask({ memory: false }) skips the memory)');
    }
    options.onProgress?.({ file: progressFile, loaded: bytes.byteLength, total: bytes.byteLength, source: 'disk' });
    return bytes;
  };
  const manifest = parseManifest(new TextDecoder().decode(await read(MANIFEST_FILE, 'model.json')), join(dir, MANIFEST_FILE));
  const vocabBytes = await read(manifest.tokenizer.vocab, 'vocab.txt');
  await verifyFile(manifest, manifest.tokenizer.vocab, vocabBytes, join(dir, manifest.tokenizer.vocab));
  const modelBytes = await read(MODEL_FILE, 'model.onnx');
  await verifyFile(manifest, MODEL_FILE, modelBytes, join(dir, MODEL_FILE));
  const memoryFile = wantedMemoryFile(manifest, options);
  let memoryBytes: Uint8Array | undefined;
  if (memoryFile !== null) {
    memoryBytes = await read(memoryFile, 'memory.bin');
    await verifyFile(manifest, memoryFile, memoryBytes, join(dir, memoryFile));
  }
  return { manifest, modelBytes, vocabBytes, ...(memoryBytes ? { memoryBytes } : {}), source: dir };
}
