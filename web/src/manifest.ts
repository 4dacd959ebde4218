/** Reading and checking model.json against the files it describes. */
import { TiankongError } from './errors.js';
import type { ModelManifest } from './types.js';

export const MANIFEST_FORMAT = 'tiankong-model/1';
export const MODEL_FILE = 'model.onnx';
export const MANIFEST_FILE = 'model.json';

function bad(where: string, problem: string): TiankongError {
  return new TiankongError('BAD_MODEL', `tiankong: ${where}: ${problem}`);
}

/**
 * Parses the text of model.json and checks the fields the runtime relies on.
 * `where` names the file in messages. Throws BAD_MODEL naming the problem.
 */
export function parseManifest(text: string, where: string): ModelManifest {
  if (/^\s*</.test(text)) {
    throw bad(where, 'got an HTML page instead of model.json — the model is not at this URL ' +
      '(a dev server or SPA fallback answers missing files with index.html); check the model URL');
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
    throw bad(where, `format is ${JSON.stringify(m.format)}, expected "${MANIFEST_FORMAT}" (export the model with scripts/export-model)`);
  }
  if (!Number.isInteger(m.architecture?.vocab_size) || m.architecture!.vocab_size <= 0) {
    throw bad(where, 'architecture.vocab_size must be a positive integer');
  }
  if (!Number.isInteger(m.max_length) || m.max_length! < 3) throw bad(where, 'max_length must be an integer ≥ 3');
  if (typeof m.tokenizer?.vocab !== 'string') throw bad(where, 'tokenizer.vocab (the vocab file name) is missing');
  if (!Array.isArray(m.inputs)) throw bad(where, 'inputs must be a list of graph input names');
  if (m.logits !== 'mask-only' || !m.inputs.includes('mask_positions')) {
    throw bad(where, `the model computes ${m.logits ?? 'unknown'} logits without a mask_positions input; tiankong ` +
      'needs the mask-only export (scripts/export-model without --full-logits)');
  }
  for (const name of ['pad', 'unk', 'cls', 'sep', 'mask'] as const) {
    if (!Number.isInteger(m.special_tokens?.[name])) throw bad(where, `special_tokens.${name} is missing`);
  }
  const files = [MODEL_FILE, m.tokenizer.vocab];
  if (m.memory !== undefined) {
    if (typeof m.memory !== 'object' || m.memory === null || typeof m.memory.file !== 'string') {
      throw bad(where, 'memory must be an object naming its file ({ "file": "memory.bin", ... })');
    }
    files.push(m.memory.file);
  }
  for (const file of files) {
    checkFileName(file, where);
    const entry = m.files?.[file];
    if (typeof entry?.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(entry.sha256) || !Number.isInteger(entry.bytes)) {
      throw bad(where, `files["${file}"] must give its sha256 (64 hex digits) and bytes`);
    }
  }
  return m as ModelManifest;
}

/**
 * Model files are plain names inside the model directory: no path separators, no "..", no
 * scheme or host, so neither a local loader nor a URL loader can be sent outside the folder.
 */
function checkFileName(file: string, where: string): void {
  if (!/^[^/\\:?#%]+$/.test(file) || file === '.' || file === '..' || file.trim() !== file) {
    throw bad(where, `${JSON.stringify(file)} is not a file name inside the model directory ` +
      '(model files are plain names such as "vocab.txt": no "/", "\\", "..", scheme or host)');
  }
}

/** Lowercase hex sha256 of bytes (WebCrypto: browsers, workers and Node ≥ 20). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Throws INTEGRITY unless `bytes` has the size and sha256 model.json declares for `file`. */
export async function verifyFile(manifest: ModelManifest, file: string, bytes: Uint8Array, where: string): Promise<void> {
  const expected = manifest.files[file]!;
  if (bytes.byteLength !== expected.bytes) {
    throw new TiankongError('INTEGRITY', `tiankong: ${where} has ${bytes.byteLength} bytes but model.json says ` +
      `${expected.bytes}; the file is truncated or from another model — re-export or re-download it`);
  }
  const actual = await sha256Hex(bytes);
  if (actual !== expected.sha256) {
    throw new TiankongError('INTEGRITY', `tiankong: ${where} has sha256 ${actual} but model.json says ` +
      `${expected.sha256}; the file is corrupt or from another model — re-export or re-download it`);
  }
}
