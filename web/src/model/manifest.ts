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
/**
 * The shortest max_length accepted: [CLS], [SEP] and 6 tokens of text, i.e. a [MASK] with a few
 * characters around it. 3 tokens hold a lone [MASK] and no context, which no fill can use, so a
 * smaller value is a typo rather than a model. The same floor as window.size.
 */
export const MIN_MAX_LENGTH = 8;
/** The largest vocabulary: the core's output layer (head.bin) holds at most 2^24 rows. */
const MAX_VOCAB = 2 ** 24;
/** The widest hidden state: the core's output layer (head.bin) reads at most 16384 columns. */
const MAX_HIDDEN = 16384;
/** Far beyond any BERT (BERT-large has 24 layers): a larger value is a typo or another file's number. */
const MAX_LAYERS = 256;
/** The special tokens the tokenizer and the decoder read (all required, no others). */
const SPECIAL_TOKENS = ['pad', 'unk', 'cls', 'sep', 'mask'] as const;
/** The graph inputs the runtime feeds (engine/session.ts); a model.json naming another is from another runtime. */
const GRAPH_INPUTS = ['input_ids', 'inputs_embeds', 'attention_mask', 'token_type_ids', 'mask_positions'];

function bad(where: string, problem: string): TiankongError {
  return new TiankongError('BAD_MODEL', `tiankong: ${where}: ${problem}`);
}

/**
 * A manifest value as messages show it (short, quoted). Numbers are written as JavaScript writes
 * them (JSON would show NaN as null), and a value JSON cannot write (a BigInt, a cycle, in a
 * manifest given as an object) still gets a message instead of a TypeError.
 */
function shown(value: unknown): string {
  let text: string;
  if (typeof value === 'number') text = String(value);
  else if (typeof value === 'bigint') text = `${value}n`;
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** What a message says was found: the value and, where its text hides it, its kind ("4" is a string). */
function found(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  const kind =
    typeof value === 'string'
      ? 'a string'
      : typeof value === 'boolean'
        ? 'a boolean'
        : Array.isArray(value)
          ? 'a list'
          : typeof value === 'object' && value !== null
            ? 'an object'
            : null;
  return kind ? `${shown(value)} (${kind})` : shown(value);
}

/** `value` as an object with fields (not null, not a list), else BAD_MODEL naming the field and its shape. */
function record(value: unknown, field: string, shape: string, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw bad(where, `${field} must be an object (${shape}), got ${found(value)}`);
  }
  return value as Record<string, unknown>;
}

/** `value` as an integer in [min, max], else BAD_MODEL naming the field, the range and why. */
function integer(value: unknown, field: string, min: number, max: number, why: string, where: string): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
    throw bad(where, `${field} must be an integer from ${min} to ${max} (${why}), got ${found(value)}`);
  }
  return value as number;
}

/** Like `integer`, for a field that may be absent (undefined when it is). */
function optionalInteger(
  value: unknown,
  field: string,
  min: number,
  max: number,
  why: string,
  where: string,
): number | undefined {
  return value === undefined ? undefined : integer(value, field, min, max, why, where);
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

/**
 * Checks an already-parsed manifest object: every field the runtime reads has its type and range
 * (a message names the field, what it must be and what it is), and so does every file entry, the
 * ones no role names included. Sizes that other files also state (model.onnx's tables, head.bin,
 * memory.bin) are compared with them once they are read (load.ts). Nothing is changed; the value
 * is returned as the checked manifest. Throws BAD_MODEL naming the first problem.
 */
export function checkManifest(value: unknown, where: string): ModelManifest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw bad(where, `the manifest must be a JSON object ({ "format": "${MANIFEST_FORMAT}", … }), got ${found(value)}`);
  }
  const m = value as Partial<ModelManifest> & Record<string, unknown>;
  if (m.format !== MANIFEST_FORMAT) {
    throw bad(
      where,
      `format is ${m.format === undefined ? 'missing' : found(m.format)}, expected "${MANIFEST_FORMAT}" ` +
        '(export the model with scripts/export-model)',
    );
  }
  if (typeof m.name !== 'string' || m.name === '') {
    throw bad(where, `name must be the model's name (a non-empty string, shown by stats()), got ${found(m.name)}`);
  }
  const vocabSize = checkArchitecture(m.architecture, where);
  integer(
    m.max_length,
    'max_length',
    MIN_MAX_LENGTH,
    MAX_LENGTH_LIMIT,
    `the longest input in tokens, [CLS] and [SEP] included; under ${MIN_MAX_LENGTH} no sentence fits around a [MASK]`,
    where,
  );
  const tokenizer = record(m.tokenizer, 'tokenizer', '{ "vocab": "vocab.txt", "lowercase": false, … }', where);
  if (typeof tokenizer['vocab'] !== 'string') {
    throw bad(
      where,
      `tokenizer.vocab must be the vocabulary's file name (a string such as "vocab.txt"), got ${found(tokenizer['vocab'])}`,
    );
  }
  for (const flag of ['lowercase', 'strip_accents', 'clean_text', 'handle_chinese_chars']) {
    if (typeof tokenizer[flag] !== 'boolean') {
      throw bad(where, `tokenizer.${flag} must be true or false (a JSON boolean), got ${found(tokenizer[flag])}`);
    }
  }
  checkInterface(m, where);
  const headShape = '{ "file": "head.bin", "dtype": "int8" | "f16" | "f32" }';
  const headIsWellFormed = typeof m.head?.file === 'string' && ['int8', 'f16', 'f32'].includes(m.head.dtype);
  if (m.logits === 'core' && !headIsWellFormed) {
    throw bad(
      where,
      `a "core" model needs head: ${headShape} (scripts/export-model --graph core), got ${found(m.head)}`,
    );
  }
  if (m.head !== undefined && !headIsWellFormed) {
    // Only a core model reads it, but a broken block means a broken or hand-edited export.
    throw bad(where, `head must be ${headShape}, got ${found(m.head)}`);
  }
  if (
    m.window !== undefined &&
    !(
      Number.isInteger(m.window?.size) &&
      Number.isInteger(m.window?.threshold) &&
      m.window.size >= MIN_MAX_LENGTH &&
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
        `threshold ≥ size and threshold ≤ whole_up_to ≤ max_length (max_length is ${m.max_length}), got ${found(m.window)}`,
    );
  }
  checkCheckRule(m.check, where);
  checkSpecialTokens(m.special_tokens, vocabSize, tokenizer['vocab'], where);
  checkFiles(m as ModelManifest, where);
  for (const field of ['quantization', 'source'] as const) {
    // Informational (how the model was made), but a list or a number here means a broken export.
    if (m[field] !== undefined) record(m[field], field, 'what scripts/export-model wrote', where);
  }
  return m as ModelManifest;
}

/** check: the spelling check's rule (scripts/tune-check), optional. */
function checkCheckRule(value: unknown, where: string): void {
  if (value === undefined) return;
  const shape =
    '{ ["prefilter": P,] ["masked_share": F,] ["masked_min": M,] "threshold": T, "penalty": { "near_sound": N, "shape": S, "context": C | null }, ' +
    '"suppress_within": W } ' +
    '(finite numbers, penalties ≥ 0, F in (0, 1], M and W integers ≥ 0, W at most 8; scripts/tune-check writes it)';
  const rule = record(value, 'check', shape, where);
  const penalty = rule['penalty'] as Record<string, unknown> | undefined;
  const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  const ok =
    (rule['prefilter'] === undefined || finite(rule['prefilter'])) &&
    (rule['masked_share'] === undefined ||
      (finite(rule['masked_share']) &&
        (rule['masked_share'] as number) > 0 &&
        (rule['masked_share'] as number) <= 1)) &&
    (rule['masked_min'] === undefined ||
      (Number.isInteger(rule['masked_min']) && (rule['masked_min'] as number) >= 0)) &&
    finite(rule['threshold']) &&
    typeof penalty === 'object' &&
    penalty !== null &&
    !Array.isArray(penalty) &&
    finite(penalty['near_sound']) &&
    (penalty['near_sound'] as number) >= 0 &&
    finite(penalty['shape']) &&
    (penalty['shape'] as number) >= 0 &&
    (penalty['context'] === null || (finite(penalty['context']) && (penalty['context'] as number) >= 0)) &&
    Number.isInteger(rule['suppress_within']) &&
    (rule['suppress_within'] as number) >= 0 &&
    (rule['suppress_within'] as number) <= 8;
  if (!ok) throw bad(where, `check must be ${shape}, got ${found(value)}`);
}

/** architecture: the sizes the runtime and the other files rely on. Returns vocab_size. */
function checkArchitecture(value: unknown, where: string): number {
  const arch = record(value, 'architecture', '{ "type": "bert", "vocab_size": …, "hidden_size": …, … }', where);
  if (typeof arch['type'] !== 'string') {
    throw bad(where, `architecture.type must be a string (the model family, "bert"), got ${found(arch['type'])}`);
  }
  const vocabSize = integer(
    arch['vocab_size'],
    'architecture.vocab_size',
    1,
    MAX_VOCAB,
    'the number of tokens in the vocabulary; the core reads at most 2^24',
    where,
  );
  const hidden = optionalInteger(
    arch['hidden_size'],
    'architecture.hidden_size',
    1,
    MAX_HIDDEN,
    "the width of the hidden states; the core's output layer reads at most 16384",
    where,
  );
  optionalInteger(
    arch['num_hidden_layers'],
    'architecture.num_hidden_layers',
    1,
    MAX_LAYERS,
    `the number of transformer layers; BERT-large has 24, ${MAX_LAYERS} is far beyond any model a device runs`,
    where,
  );
  const heads = optionalInteger(
    arch['num_attention_heads'],
    'architecture.num_attention_heads',
    1,
    hidden ?? MAX_HIDDEN,
    'at most one per hidden unit',
    where,
  );
  if (heads !== undefined && hidden !== undefined && hidden % heads !== 0) {
    throw bad(
      where,
      `architecture.num_attention_heads must divide architecture.hidden_size ${hidden} (every head gets an equal ` +
        `share of the hidden state), got ${heads}`,
    );
  }
  optionalInteger(
    arch['intermediate_size'],
    'architecture.intermediate_size',
    1,
    16 * MAX_HIDDEN,
    'the feed-forward width; BERT uses 4 × hidden_size',
    where,
  );
  optionalInteger(
    arch['max_position_embeddings'],
    'architecture.max_position_embeddings',
    1,
    MAX_LENGTH_LIMIT,
    'the rows of the position table, the longest input the model was built for',
    where,
  );
  // Informational (the export reads them from the checkpoint; the graph already has their effect).
  for (const field of ['layer_norm_position', 'ffn_type']) {
    if (arch[field] !== undefined && typeof arch[field] !== 'string') {
      throw bad(where, `architecture.${field} must be a string, got ${found(arch[field])}`);
    }
  }
  if (arch['projection_bias'] !== undefined && typeof arch['projection_bias'] !== 'boolean') {
    throw bad(where, `architecture.projection_bias must be true or false, got ${found(arch['projection_bias'])}`);
  }
  return vocabSize;
}

/** inputs, logits and outputs: the graph interface the runtime feeds and reads. */
function checkInterface(m: Partial<ModelManifest> & Record<string, unknown>, where: string): void {
  const inputs: unknown = m.inputs;
  if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((i) => typeof i === 'string')) {
    throw bad(
      where,
      `inputs must be a list of the graph's input names (strings such as "input_ids"), got ${found(inputs)}`,
    );
  }
  for (const [i, name] of inputs.entries()) {
    if (!GRAPH_INPUTS.includes(name)) {
      throw bad(
        where,
        `inputs lists ${shown(name)}, which is not an input tiankong feeds (${GRAPH_INPUTS.join(', ')})`,
      );
    }
    if (inputs.indexOf(name) !== i) throw bad(where, `inputs lists ${shown(name)} twice`);
  }
  if ((m.logits !== 'mask-only' && m.logits !== 'core') || !inputs.includes('mask_positions')) {
    throw bad(
      where,
      `the model computes ${typeof m.logits === 'string' ? m.logits : 'unknown'} logits without a mask_positions input; ` +
        'tiankong needs the mask-only or core export (scripts/export-model without --full-logits)',
    );
  }
  const [first, output] = m.logits === 'core' ? ['inputs_embeds', 'hidden'] : ['input_ids', 'logits'];
  if (!inputs.includes(first)) {
    throw bad(where, `inputs must list "${first}" (a ${m.logits} model takes it), got ${found(inputs)}`);
  }
  const outputs: unknown = m.outputs;
  if (!Array.isArray(outputs) || !outputs.every((o) => typeof o === 'string') || !outputs.includes(output)) {
    throw bad(
      where,
      `outputs must be a list of the graph's output names that holds "${output}" (what a ${m.logits} model ` +
        `is read from; scripts/export-model writes ["${output}"]), got ${found(outputs)}`,
    );
  }
}

/** special_tokens: the five ids the tokenizer and decoder use, each a distinct token of the vocabulary. */
function checkSpecialTokens(value: unknown, vocabSize: number, vocabFile: string, where: string): void {
  const special = record(value, 'special_tokens', '{ "pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4 }', where);
  const names = new Map<number, string>();
  for (const name of SPECIAL_TOKENS) {
    const id = integer(
      special[name],
      `special_tokens.${name}`,
      0,
      vocabSize - 1,
      `a token id of the ${vocabSize}-token vocabulary, architecture.vocab_size`,
      where,
    );
    const other = names.get(id);
    if (other !== undefined) {
      throw bad(
        where,
        `special_tokens.${other} and special_tokens.${name} are both ${id}; each is a different line of ${vocabFile}`,
      );
    }
    names.set(id, name);
  }
  for (const name of Object.keys(special)) {
    if (!(SPECIAL_TOKENS as readonly string[]).includes(name)) {
      throw bad(
        where,
        `special_tokens has ${shown(name)}: ${shown(special[name])}, which tiankong does not read ` +
          `(it reads ${SPECIAL_TOKENS.join(', ')}); remove it`,
      );
    }
  }
}

/**
 * The files model.json names (model.onnx, tokenizer.vocab, head.file, memory.file, memory.ngrams) and the
 * entries of `files`: each named file is a plain name, has one role and an entry; every entry,
 * named or not, is a plain name with a well-formed sha256 and size.
 */
function checkFiles(m: ModelManifest, where: string): void {
  // Every file the runtime reads, with the model.json field that names it.
  const files: [field: string, name: string][] = [
    ['the model graph', MODEL_FILE],
    ['tokenizer.vocab', m.tokenizer.vocab],
  ];
  if (m.logits === 'core') files.push(['head.file', m.head!.file]);
  if (m.memory !== undefined) {
    if (typeof m.memory !== 'object' || m.memory === null || typeof m.memory.file !== 'string') {
      throw bad(
        where,
        `memory must be an object naming its file ({ "file": "memory.bin", ... }), got ${found(m.memory)}`,
      );
    }
    files.push(['memory.file', m.memory.file]);
    if (m.memory.ngrams !== undefined) {
      if (typeof m.memory.ngrams !== 'string') {
        throw bad(
          where,
          `memory.ngrams must name the memory's second file ("memory-ngrams.bin"), got ${found(m.memory.ngrams)}`,
        );
      }
      files.push(['memory.ngrams', m.memory.ngrams]);
    }
  }
  const listed = record(m.files, 'files', '{ "model.onnx": { "sha256": …, "bytes": … }, … }', where);
  const seen = new Map<string, string>();
  for (const [field, file] of files) {
    checkFileName(file, field, where);
    const other = seen.get(file);
    if (other !== undefined)
      throw bad(where, `${field} names ${shown(file)}, which ${other} already names; each file has one role`);
    seen.set(file, field);
    checkFileEntry(m.files, file, where);
  }
  // The entries no role names: not read, but a wrong size or digest there means a broken export.
  for (const file of Object.keys(listed)) {
    if (seen.has(file)) continue;
    checkFileName(file, 'a key of files', where);
    checkFileEntry(m.files, file, where);
  }
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
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw bad(where, `${field} must be { "sha256": …, "bytes": … }, got ${found(entry)}`);
  }
  if (typeof entry.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(entry.sha256)) {
    throw bad(where, `${field}.sha256 must be the file's SHA-256 as 64 hex digits, got ${found(entry.sha256)}`);
  }
  if (!Number.isInteger(entry.bytes) || (entry.bytes as number) < 1 || (entry.bytes as number) > MAX_FILE_BYTES) {
    throw bad(
      where,
      `${field}.bytes must be the file's size, an integer from 1 to ${MAX_FILE_BYTES}, got ${found(entry.bytes)}`,
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
 * The files to load for a checked manifest: the vocabulary, the model, the corpus memory (its
 * second part too when split) when the manifest lists one and `withMemory`, and the output layer
 * of a "core" model.
 */
export function listedFiles(manifest: ModelManifest, withMemory: boolean): ListedFile[] {
  const entry = (name: string, role: ListedFile['role']): ListedFile => {
    const { sha256, bytes } = manifest.files[name]!;
    return { name, role, sha256: sha256.toLowerCase(), bytes };
  };
  const files = [entry(manifest.tokenizer.vocab, 'vocab.txt'), entry(MODEL_FILE, 'model.onnx')];
  if (withMemory && manifest.memory) {
    files.push(entry(manifest.memory.file, 'memory.bin'));
    if (manifest.memory.ngrams !== undefined) files.push(entry(manifest.memory.ngrams, 'memory-ngrams.bin'));
  }
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
