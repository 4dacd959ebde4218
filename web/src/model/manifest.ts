/**
 * model.json: parsing and checking it, the files it lists, and checking those files against it
 * (size and sha256). Pure functions over bytes and text; the sources (url.ts, bytes.ts, Node's
 * directories in node.ts) do the reading and load.ts runs the steps in order.
 */
import { TiankongError } from '../errors.js';
import type { LoadProgress, ModelManifest } from '../types.js';

/** The manifest format this runtime reads (model.json's "format"). */
export const MANIFEST_FORMAT = 'tiankong-model/1';
/** The graph's file name inside a model directory. */
export const MODEL_FILE = 'model.onnx';
/** The manifest's file name inside a model directory. */
export const MANIFEST_FILE = 'model.json';

/** The largest model file the runtime reads (ONNX's protobuf limit; also a wasm32 heap's practical one). */
export const MAX_FILE_BYTES = 2 ** 31 - 1;
/** The longest max_length accepted (far beyond any BERT position table; long inputs use windows). */
const MAX_LENGTH_LIMIT = 2 ** 20;

function bad(where: string, problem: string): TiankongError {
  return new TiankongError('BAD_MODEL', `tiankong: ${where}: ${problem}`);
}

/** A manifest value as messages show it (short, quoted). */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/**
 * Parses the text of model.json and checks the fields the runtime relies on.
 * `where` names the file in messages. Throws BAD_MODEL naming the problem.
 */
export function parseManifest(text: string, where: string): ModelManifest {
  if (/^\s*</.test(text)) {
    throw bad(
      where,
      'got an HTML page instead of model.json — the model is not at this URL ' +
        '(a dev server or SPA fallback answers missing files with index.html); check the model URL',
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw bad(where, `is not valid JSON (${(error as Error).message})`);
  }
  return checkManifest(value, where);
}

/** Checks an already-parsed manifest object. Throws BAD_MODEL naming the first problem. */
export function checkManifest(value: unknown, where: string): ModelManifest {
  if (typeof value !== 'object' || value === null) throw bad(where, 'manifest must be a JSON object');
  const m = value as Partial<ModelManifest>;
  if (m.format !== MANIFEST_FORMAT) {
    throw bad(
      where,
      `format is ${JSON.stringify(m.format)}, expected "${MANIFEST_FORMAT}" (export the model with scripts/export-model)`,
    );
  }
  if (!Number.isInteger(m.architecture?.vocab_size) || m.architecture!.vocab_size <= 0) {
    throw bad(where, 'architecture.vocab_size must be a positive integer');
  }
  if (!Number.isInteger(m.max_length) || m.max_length! < 3 || m.max_length! > MAX_LENGTH_LIMIT) {
    throw bad(where, `max_length must be an integer from 3 to ${MAX_LENGTH_LIMIT}, got ${shown(m.max_length)}`);
  }
  if (typeof m.tokenizer?.vocab !== 'string') throw bad(where, 'tokenizer.vocab (the vocab file name) is missing');
  if (!Array.isArray(m.inputs)) throw bad(where, 'inputs must be a list of graph input names');
  if ((m.logits !== 'mask-only' && m.logits !== 'core') || !m.inputs.includes('mask_positions')) {
    throw bad(
      where,
      `the model computes ${m.logits ?? 'unknown'} logits without a mask_positions input; tiankong ` +
        'needs the mask-only or core export (scripts/export-model without --full-logits)',
    );
  }
  if (m.logits === 'core' && (typeof m.head?.file !== 'string' || !['int8', 'f16', 'f32'].includes(m.head.dtype))) {
    throw bad(
      where,
      'a "core" model needs head: { "file": "head.bin", "dtype": "int8" | "f16" | "f32" } ' +
        '(scripts/export-model --graph core)',
    );
  }
  if (
    m.window !== undefined &&
    !(
      Number.isInteger(m.window?.size) &&
      Number.isInteger(m.window?.threshold) &&
      m.window.size >= 8 &&
      m.window.size <= m.max_length! &&
      m.window.threshold >= m.window.size &&
      (m.window.whole_up_to === undefined ||
        (Number.isInteger(m.window.whole_up_to) &&
          m.window.whole_up_to >= m.window.threshold &&
          m.window.whole_up_to <= m.max_length!))
    )
  ) {
    throw bad(
      where,
      'window must be { "threshold": N, "size": M[, "whole_up_to": W] } with 8 ≤ size ≤ max_length, ' +
        'threshold ≥ size and threshold ≤ whole_up_to ≤ max_length',
    );
  }
  for (const name of ['pad', 'unk', 'cls', 'sep', 'mask'] as const) {
    if (!Number.isInteger(m.special_tokens?.[name])) throw bad(where, `special_tokens.${name} is missing`);
  }
  // Every file the runtime reads, with the model.json field that names it.
  const files: [field: string, name: string][] = [
    ['the model graph', MODEL_FILE],
    ['tokenizer.vocab', m.tokenizer.vocab],
  ];
  if (m.logits === 'core') files.push(['head.file', m.head!.file]);
  if (m.memory !== undefined) {
    if (typeof m.memory !== 'object' || m.memory === null || typeof m.memory.file !== 'string') {
      throw bad(where, 'memory must be an object naming its file ({ "file": "memory.bin", ... })');
    }
    files.push(['memory.file', m.memory.file]);
  }
  const seen = new Map<string, string>();
  for (const [field, file] of files) {
    checkFileName(file, field, where);
    const other = seen.get(file);
    if (other !== undefined)
      throw bad(where, `${field} names ${shown(file)}, which ${other} already names; each file has one role`);
    seen.set(file, field);
    checkFileEntry(m.files, file, where);
  }
  return m as ModelManifest;
}

/**
 * Model files are plain names inside the model directory — letters, digits, "_", "-" and ".", not
 * starting with "." — so neither a local loader (path.join) nor a URL loader (new URL(name,
 * folder)) can be sent anywhere else: no separators, no "..", no scheme or host, no "%" escapes,
 * and no tab or newline (which URL parsing deletes: ".\t." would become ".."). Throws BAD_MODEL
 * naming the field; nothing has been read yet.
 */
function checkFileName(file: string, field: string, where: string): void {
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/.test(file) || file === MANIFEST_FILE) {
    throw bad(
      where,
      `${field} is ${shown(file)}, which is not a file name inside the model directory (model files ` +
        'are plain names such as "vocab.txt": letters, digits, "_", "-" and "."; no "/", "\\", "..", scheme or host)',
    );
  }
}

/** files[name] must give the file's size (bytes, 1 … 2^31 − 1) and its sha256 (64 hex digits). */
function checkFileEntry(files: ModelManifest['files'] | undefined, file: string, where: string): void {
  const field = `files[${JSON.stringify(file)}]`;
  if (typeof files !== 'object' || files === null || !Object.prototype.hasOwnProperty.call(files, file)) {
    throw bad(where, `${field} is missing: model.json must list every file it names with its sha256 and bytes`);
  }
  const entry = files[file] as { sha256?: unknown; bytes?: unknown } | null;
  if (typeof entry !== 'object' || entry === null) throw bad(where, `${field} must be { "sha256": …, "bytes": … }`);
  if (typeof entry.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(entry.sha256)) {
    throw bad(where, `${field}.sha256 must be the file's SHA-256 as 64 hex digits, got ${shown(entry.sha256)}`);
  }
  if (!Number.isInteger(entry.bytes) || (entry.bytes as number) < 1 || (entry.bytes as number) > MAX_FILE_BYTES) {
    throw bad(
      where,
      `${field}.bytes must be the file's size, an integer from 1 to ${MAX_FILE_BYTES}, got ${shown(entry.bytes)}`,
    );
  }
}

/** One file model.json lists, as a loader reads it. */
export interface ListedFile {
  /** The file name inside the model directory (checked: a plain name). */
  name: string;
  /** What it is, as progress events name it. */
  role: Exclude<LoadProgress['file'], 'model.json'>;
  sha256: string;
  bytes: number;
}

/**
 * The files to load for a checked manifest, in load order: the vocabulary, the model, the corpus
 * memory when the manifest lists one and `withMemory`, and the output layer of a "core" model.
 */
export function listedFiles(manifest: ModelManifest, withMemory: boolean): ListedFile[] {
  const entry = (name: string, role: ListedFile['role']): ListedFile => {
    const { sha256, bytes } = manifest.files[name]!;
    return { name, role, sha256: sha256.toLowerCase(), bytes };
  };
  const files = [entry(manifest.tokenizer.vocab, 'vocab.txt'), entry(MODEL_FILE, 'model.onnx')];
  if (withMemory && manifest.memory) files.push(entry(manifest.memory.file, 'memory.bin'));
  if (manifest.logits === 'core') files.push(entry(manifest.head!.file, 'head.bin'));
  return files;
}

/** Lowercase hex sha256 of bytes (WebCrypto: browsers, workers and Node ≥ 20). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** True when `bytes` has the size and sha256 model.json declares for `file` (a stored copy is checked this way). */
export async function matchesFile(file: ListedFile, bytes: Uint8Array): Promise<boolean> {
  return bytes.byteLength === file.bytes && (await sha256Hex(bytes)) === file.sha256;
}

/** Throws INTEGRITY unless `bytes` has the size and sha256 model.json declares for `file`. */
export async function verifyFile(expected: ListedFile, bytes: Uint8Array, where: string): Promise<void> {
  if (bytes.byteLength !== expected.bytes) {
    throw new TiankongError(
      'INTEGRITY',
      `tiankong: ${where} has ${bytes.byteLength} bytes but model.json says ` +
        `${expected.bytes}; the file is truncated or from another model — re-export or re-download it`,
    );
  }
  const actual = await sha256Hex(bytes);
  if (actual !== expected.sha256) {
    throw new TiankongError(
      'INTEGRITY',
      `tiankong: ${where} has sha256 ${actual} but model.json says ` +
        `${expected.sha256}; the file is corrupt or from another model — re-export or re-download it`,
    );
  }
}
