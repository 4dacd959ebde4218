/**
 * Every user option, checked once, here, before anything reaches the C++ core (whose bindings
 * only check types): createFillMask's options (Node entry and the Worker alike), fill/fillBatch
 * options, explain's arguments. Each check throws BAD_OPTION naming the option and the value.
 */
import { TiankongError, describe } from '../errors.js';
import type {
  Backend,
  CandidateFilter,
  CheckOptions,
  CreateFillMaskOptions,
  ExplainOptions,
  FillOptions,
} from '../types.js';
import { checkFilter, filterKey } from './filters.js';

/** Candidates per mask when `topK` is not given. */
export const DEFAULT_TOP_K = 5;
/** The result cache's bounds when `cache` does not give them. */
export const DEFAULT_CACHE = { maxEntries: 1000, maxBytes: 8 << 20 };
/** Joint decoding's beam when `beam` is not given. */
export const DEFAULT_BEAM = 5;
/** Joint decoding costs up to 1 + beam·(masks − 1) model runs per run of masks. */
export const MAX_BEAM = 32;
/** The core's cache bound: at most half the single-threaded build's 2 GiB heap (FingerprintCache). */
const MAX_CACHE_BYTES = 2 ** 30;
const MAX_CACHE_ENTRIES = 1e9;
/** More intra-op threads than this only adds overhead (and each is an OS thread or a Web Worker). */
export const MAX_THREADS = 64;

const bad = (message: string) => new TiankongError('BAD_OPTION', `tiankong: ${message}`);

/** A value as messages show it: strings quoted, other types named (`"5" (a string)`, `null`, `an array`). */
export function show(value: unknown): string {
  if (typeof value === 'string') {
    const text = JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
    return `${text} (a string)`;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return `${String(value)}${typeof value === 'number' ? '' : ` (a ${typeof value})`}`;
  }
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** The options each call takes (own properties only; anything else is BAD_OPTION). */
const CREATE_KEYS = ['model', 'threads', 'backend', 'onProgress', 'onPreview', 'cache', 'memory', 'signal'] as const;
const FILL_KEYS = ['topK', 'threshold', 'filter', 'joint', 'beam', 'memory', 'constraints', 'signal'] as const;
/** Longest constraint a mask may be given (a syllable with its tone mark is at most ~8 characters). */
const MAX_CONSTRAINT_LENGTH = 16;
const EXPLAIN_KEYS = ['signal'] as const;
const CHECK_KEYS = ['sensitivity', 'keep', 'memory', 'signal'] as const;
/** Bounds of check's keep-list: entries, and characters per entry. */
const MAX_KEEP = 10_000;
const MAX_KEEP_LENGTH = 64;

/** Edit distance, case-insensitive (topk -> topK is 0): how close a misspelt option is. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let row = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    row = next;
  }
  return row[y.length];
}

/**
 * The own enumerable properties of an options object, each one of `known`, as a plain object:
 * an inherited property (Object.prototype.topK = 1e9) is never read, an unknown key is BAD_OPTION
 * naming the nearest known one, and a getter or Proxy that throws is BAD_OPTION too (never a raw
 * Error).
 */
function ownOptions<T>(value: object, known: readonly string[], where: string): Partial<T> {
  let keys: string[];
  try {
    keys = Object.keys(value);
  } catch (error) {
    throw bad(`${where}: reading the options failed: ${describe(error)}`);
  }
  const out: Record<string, unknown> = Object.create(null); // no inherited values either
  for (const key of keys) {
    if (!known.includes(key)) {
      const nearest = [...known].sort((a, b) => distance(key, a) - distance(key, b))[0];
      const hint =
        nearest && distance(key, nearest) <= Math.max(2, Math.floor(nearest.length / 3))
          ? `; did you mean ${nearest}?`
          : `; it takes ${known.join(', ')}`;
      throw bad(`${where} has no option ${JSON.stringify(key)}${hint}`);
    }
    try {
      out[key] = (value as Record<string, unknown>)[key];
    } catch (error) {
      throw bad(`${where}: reading the option ${key} failed: ${describe(error)}`);
    }
  }
  return out as Partial<T>;
}

/** createFillMask's options after checking (the model source is checked where it is loaded). */
export interface CreateSettings {
  backend: Backend;
  /** Requested intra-op threads, or undefined for the platform default (see defaultThreads). */
  threads: number | undefined;
  cache: { maxEntries: number; maxBytes: number };
  /** Load the corpus memory when the model lists one. */
  memory: boolean;
}

/**
 * Checks createFillMask's options (the object itself, backend, threads, memory, cache, model's
 * type, onProgress, signal) before anything loads. Shared by the Node entry and the Worker (which
 * gets the options as they crossed postMessage).
 */
export function checkCreateOptions(value: unknown, extraKeys: readonly string[] = []): CreateSettings {
  if (typeof value === 'string' || value instanceof URL) {
    throw bad(
      `createFillMask takes an options object, got ${show(String(value))}; to load the model at that ` +
        `location write createFillMask({ model: ${JSON.stringify(String(value))} })`,
    );
  }
  checkObject(value, "createFillMask's options");
  const options = ownOptions<CreateFillMaskOptions>(value as object, [...CREATE_KEYS, ...extraKeys], 'createFillMask');
  const { backend = 'auto', threads, memory } = options;
  if (!['auto', 'wasm', 'webgpu'].includes(backend)) {
    throw bad(`backend must be 'auto', 'wasm' or 'webgpu', got ${show(backend)}`);
  }
  if (threads !== undefined && (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS)) {
    throw bad(`threads must be an integer from 1 to ${MAX_THREADS}, got ${show(threads)}`);
  }
  checkBoolean('memory', memory);
  checkModelSource(options.model);
  for (const name of ['onProgress', 'onPreview'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw bad(`${name} must be a function, got ${show(options[name])}`);
    }
  }
  checkSignal(options.signal);
  if (options.cache !== undefined) checkObject(options.cache, 'cache');
  const unknown = Object.keys(options.cache ?? {}).filter((key) => key !== 'maxEntries' && key !== 'maxBytes');
  if (unknown.length > 0)
    throw bad(`cache takes maxEntries and maxBytes, got ${unknown.map((k) => JSON.stringify(k)).join(', ')}`);
  const cache = { ...DEFAULT_CACHE, ...options.cache };
  const limits: Record<string, number> = { maxEntries: MAX_CACHE_ENTRIES, maxBytes: MAX_CACHE_BYTES };
  for (const [name, limit] of Object.entries(limits)) {
    const count = cache[name as keyof typeof cache];
    if (!Number.isInteger(count) || count < 0 || count > limit) {
      throw bad(`cache.${name} must be an integer from 0 to ${limit}, got ${show(count)}`);
    }
  }
  return { backend, threads, cache, memory: memory !== false };
}

/**
 * The type of createFillMask's `model`: undefined (the default model), a non-empty string, a URL,
 * or an object with the bytes (whose fields model/bytes.ts checks). Throws BAD_OPTION.
 */
export function checkModelSource(model: unknown): void {
  if (model === undefined || model instanceof URL) return;
  if (typeof model === 'string') {
    if (model.trim() === '') throw bad('model must name a model directory or URL, got an empty string');
    return;
  }
  if (typeof model === 'object' && model !== null && !Array.isArray(model) && 'modelBytes' in model) return;
  throw bad(
    `model must be a model directory or URL (a string or a URL) or { modelBytes, vocabBytes, manifest }, ` +
      `got ${show(model)}`,
  );
}

/** A `signal` option: undefined or an AbortSignal (anything with `aborted` and `addEventListener`). Throws BAD_OPTION. */
export function checkSignal(signal: unknown): asserts signal is AbortSignal | undefined {
  if (signal === undefined) return;
  const s = signal as Partial<AbortSignal> | null;
  if (
    typeof s !== 'object' ||
    s === null ||
    typeof s.aborted !== 'boolean' ||
    typeof s.addEventListener !== 'function' ||
    typeof s.removeEventListener !== 'function'
  ) {
    throw bad(`signal must be an AbortSignal (e.g. new AbortController().signal), got ${show(signal)}`);
  }
}

/** Default thread count for `cores` logical CPUs: more than 4 rarely helps a batch-1 BERT. */
export function defaultThreads(cores: number): number {
  return Math.max(1, Math.min(4, cores));
}

/**
 * The intra-op threads to run with and why (what `stats().threadsReason` says): the default for
 * `cores` CPUs, or the requested count clamped to the CPUs there are (more threads than cores only
 * makes them wait for each other, and each is an OS thread or a Web Worker).
 */
export function resolveThreads(requested: number | undefined, cores: number): { count: number; reason: string } {
  const available = Math.max(1, cores);
  if (requested === undefined)
    return { count: defaultThreads(available), reason: `default: min(4, ${available} CPUs)` };
  if (requested > available) {
    return { count: available, reason: `requested ${requested}, clamped to the ${available} CPUs of this machine` };
  }
  return { count: requested, reason: 'requested' };
}

/** What selects a decoder: its options, and the key its results are cached under. */
export interface DecodeSettings {
  topK: number;
  threshold: number;
  filter: CandidateFilter | undefined;
  /** Fuse the corpus memory (when the model has one loaded). */
  memory: boolean;
  /** Names these settings in the result cache (with the memory's use resolved by the engine). */
  key: string;
}

/** fill/fillBatch options after checking. */
export interface FillSettings {
  decode: DecodeSettings;
  /**
   * With `joint: true`: the beam, how many words to report and the lowest score a reported word
   * may have (`topK`, `threshold`), and the decoder proposing `beam` candidates per row.
   */
  joint: { beam: number; topK: number; threshold: number; decode: DecodeSettings } | null;
  /** Per mask, a sound constraint or null/undefined (checked for type; pinyin.ts resolves them). */
  constraints: readonly (string | null | undefined)[] | undefined;
}

/**
 * Checks fill/fillBatch options for a model of `vocabSize` tokens. Filter tokens are looked up in
 * the vocabulary when the decoder is built (filters.ts: filterIds).
 */
export function checkFillOptions(value: FillOptions, vocabSize: number): FillSettings {
  checkObject(value, 'options');
  const options = ownOptions<FillOptions>(value, FILL_KEYS, 'fill');
  checkSignal(options.signal);
  const topK = options.topK ?? DEFAULT_TOP_K;
  const threshold = options.threshold ?? 0;
  if (!Number.isInteger(topK) || topK < 1 || topK > vocabSize) {
    throw bad(`topK must be an integer from 1 to ${vocabSize} (the vocabulary size), got ${show(topK)}`);
  }
  if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1)) {
    throw bad(`threshold must be a probability from 0 to 1, got ${show(threshold)}`);
  }
  checkBoolean('memory', options.memory);
  const filter = checkFilter(options.filter);
  const memory = options.memory !== false;
  const decode = decodeSettings(topK, threshold, filter, memory);
  const constraints = checkConstraints(options.constraints);
  const { joint, beam } = options;
  checkBoolean('joint', joint);
  if (!joint) {
    if (beam !== undefined) throw bad('beam only applies to joint decoding; pass joint: true with it');
    return { decode, joint: null, constraints };
  }
  const width = beam ?? DEFAULT_BEAM;
  if (!Number.isInteger(width) || width < 1 || width > MAX_BEAM)
    throw bad(`beam must be an integer from 1 to ${MAX_BEAM}, got ${show(beam)}`);
  return {
    decode,
    joint: { beam: width, topK, threshold, decode: decodeSettings(width, 0, filter, memory) },
    constraints,
  };
}

/**
 * fill's `constraints`: an array with, per mask, a pinyin constraint string ("shang4", "平") or
 * null/undefined; copied, so a caller changing the array later changes nothing. What each string
 * says is judged against the text's masks (pinyin.ts).
 */
function checkConstraints(value: unknown): (string | null | undefined)[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    throw bad(`constraints must be an array with a pinyin constraint (or null) per mask, got ${show(value)}`);
  }
  const copy = Array.from(value as unknown[]);
  copy.forEach((entry, index) => {
    if (entry === null || entry === undefined) return;
    if (typeof entry !== 'string' || entry.length > MAX_CONSTRAINT_LENGTH) {
      throw bad(
        `constraints[${index}] must be a syllable such as "shang", "shang4" or "shàng", or "平" / "仄" ` +
          `(at most ${MAX_CONSTRAINT_LENGTH} characters), or null; got ${show(entry)}`,
      );
    }
  });
  return copy as (string | null | undefined)[];
}

function decodeSettings(
  topK: number,
  threshold: number,
  filter: CandidateFilter | undefined,
  memory: boolean,
): DecodeSettings {
  return { topK, threshold, filter, memory, key: `${topK}|${threshold}|${filterKey(filter)}` };
}

/** explain's options: an object (its signal is the only field). */
export function checkExplainOptions(value: ExplainOptions): void {
  checkObject(value, 'options');
  checkSignal(ownOptions<ExplainOptions>(value, EXPLAIN_KEYS, 'explain').signal);
}

/** check's options after checking. */
export interface CheckSettings {
  sensitivity: number;
  /** Copied: the caller changing the array later changes nothing. */
  keep: string[];
  memory: boolean;
}

/** Checks check's options (sensitivity in [0, 1], keep-list of non-empty strings, memory, signal). */
export function checkCheckOptions(value: CheckOptions): CheckSettings {
  checkObject(value, 'options');
  const options = ownOptions<CheckOptions>(value, CHECK_KEYS, 'check');
  checkSignal(options.signal);
  const sensitivity = options.sensitivity ?? 0.5;
  if (typeof sensitivity !== 'number' || !(sensitivity >= 0 && sensitivity <= 1)) {
    throw bad(`sensitivity must be a number from 0 to 1 (0.5 is the tuned default), got ${show(sensitivity)}`);
  }
  checkBoolean('memory', options.memory);
  const keep: string[] = [];
  if (options.keep !== undefined) {
    if (!Array.isArray(options.keep)) {
      throw bad(`keep must be an array of characters or words never flagged, got ${show(options.keep)}`);
    }
    if (options.keep.length > MAX_KEEP) throw bad(`keep holds ${options.keep.length} entries; at most ${MAX_KEEP}`);
    for (let i = 0; i < options.keep.length; i++) {
      const entry: unknown = options.keep[i];
      if (typeof entry !== 'string' || entry.trim() === '' || entry.length > MAX_KEEP_LENGTH) {
        throw bad(
          `keep[${i}] must be a non-empty string of at most ${MAX_KEEP_LENGTH} characters (a character or a word), ` +
            `got ${show(entry)}`,
        );
      }
      keep.push(entry);
    }
  }
  return { sensitivity, keep, memory: options.memory !== false };
}

/** explain's `maskIndex` for a text with `count` masks. */
export function checkMaskIndex(maskIndex: number, count: number): void {
  if (!Number.isInteger(maskIndex) || maskIndex < 0 || maskIndex >= count) {
    throw bad(
      `maskIndex must be an integer from 0 to ${count - 1} (the text has ${count} [MASK]), got ${show(maskIndex)}`,
    );
  }
}

/** explain's `token`: a string (whether the vocabulary has it is checked against the model). */
export function checkCandidateToken(token: unknown): asserts token is string {
  if (typeof token !== 'string') throw bad(`token must be a string (a candidate fill() returned), got ${show(token)}`);
}

/** The text of fill/explain. */
export function checkText(text: unknown): asserts text is string {
  if (typeof text !== 'string') throw bad(`text must be a string, got ${show(text)}`);
}

/** fillBatch's texts: an array (each text is checked as it is prepared). */
export function checkTexts(texts: unknown): asserts texts is unknown[] {
  if (!Array.isArray(texts)) throw bad(`fillBatch expects an array of strings, got ${show(texts)}`);
}

function checkObject(value: unknown, name: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw bad(`${name} must be an object, got ${show(value)}`);
}

function checkBoolean(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean') throw bad(`${name} must be true or false, got ${show(value)}`);
}
