/**
 * Every user option, checked once, here, before anything reaches the C++ core (whose bindings
 * only check types): createFillMask's options (Node entry and the Worker alike), fill/fillBatch
 * options, explain's arguments. Each check throws BAD_OPTION naming the option and the value.
 */
import { TiankongError } from '../errors.js';
import type { Backend, CandidateFilter, CreateFillMaskOptions, ExplainOptions, FillOptions } from '../types.js';
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

const bad = (message: string) => new TiankongError('BAD_OPTION', `tiankong: ${message}`);

/** createFillMask's options after checking (the model source is checked where it is loaded). */
export interface CreateSettings {
  backend: Backend;
  /** Requested intra-op threads, or undefined for the platform default (see defaultThreads). */
  threads: number | undefined;
  cache: { maxEntries: number; maxBytes: number };
  /** Load the corpus memory when the model lists one. */
  memory: boolean;
}

/** Checks createFillMask's options (backend, threads, memory, cache) before anything loads. */
export function checkCreateOptions(options: Pick<CreateFillMaskOptions, 'backend' | 'threads' | 'cache' | 'memory'>): CreateSettings {
  const { backend = 'auto', threads, memory } = options;
  if (!['auto', 'wasm', 'webgpu'].includes(backend)) {
    throw bad(`backend must be 'auto', 'wasm' or 'webgpu', got ${JSON.stringify(backend)}`);
  }
  if (threads !== undefined && (!Number.isInteger(threads) || threads < 1)) {
    throw bad(`threads must be a positive integer, got ${threads}`);
  }
  checkBoolean('memory', memory);
  const cache = { ...DEFAULT_CACHE, ...options.cache };
  const limits: Record<string, number> = { maxEntries: MAX_CACHE_ENTRIES, maxBytes: MAX_CACHE_BYTES };
  for (const [name, value] of Object.entries(cache)) {
    if (!Number.isInteger(value) || value < 0) throw bad(`cache.${name} must be a non-negative integer, got ${value}`);
    if (value > (limits[name] ?? Infinity)) throw bad(`cache.${name} must be at most ${limits[name]}, got ${value}`);
  }
  return { backend, threads, cache, memory: memory !== false };
}

/** Default thread count for `cores` logical CPUs: more than 4 rarely helps a batch-1 BERT. */
export function defaultThreads(cores: number): number {
  return Math.max(1, Math.min(4, cores));
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
  /** With `joint: true`: the beam, how many words to report, and the decoder proposing `beam` per row. */
  joint: { beam: number; topK: number; decode: DecodeSettings } | null;
}

/**
 * Checks fill/fillBatch options for a model of `vocabSize` tokens. Filter tokens are looked up in
 * the vocabulary when the decoder is built (filters.ts: filterIds).
 */
export function checkFillOptions(options: FillOptions, vocabSize: number): FillSettings {
  checkObject(options);
  const topK = options.topK ?? DEFAULT_TOP_K;
  const threshold = options.threshold ?? 0;
  if (!Number.isInteger(topK) || topK < 1 || topK > vocabSize) {
    throw bad(`topK must be an integer from 1 to ${vocabSize} (the vocabulary size), got ${topK}`);
  }
  if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1)) {
    throw bad(`threshold must be a probability from 0 to 1, got ${threshold}`);
  }
  checkBoolean('memory', options.memory);
  const filter = checkFilter(options.filter);
  const memory = options.memory !== false;
  const decode = decodeSettings(topK, threshold, filter, memory);
  const { joint, beam } = options;
  checkBoolean('joint', joint);
  if (!joint) {
    if (beam !== undefined) throw bad('beam only applies to joint decoding; pass joint: true with it');
    return { decode, joint: null };
  }
  const width = beam ?? DEFAULT_BEAM;
  if (!Number.isInteger(width) || width < 1 || width > MAX_BEAM) throw bad(`beam must be an integer from 1 to ${MAX_BEAM}, got ${beam}`);
  return { decode, joint: { beam: width, topK, decode: decodeSettings(width, 0, filter, memory) } };
}

function decodeSettings(topK: number, threshold: number, filter: CandidateFilter | undefined, memory: boolean): DecodeSettings {
  return { topK, threshold, filter, memory, key: `${topK}|${threshold}|${filterKey(filter)}` };
}

/** explain's options: an object (its signal is the only field). */
export function checkExplainOptions(options: ExplainOptions): void {
  checkObject(options);
}

/** explain's `maskIndex` for a text with `count` masks. */
export function checkMaskIndex(maskIndex: number, count: number): void {
  if (!Number.isInteger(maskIndex) || maskIndex < 0 || maskIndex >= count) {
    throw bad(`maskIndex must be an integer from 0 to ${count - 1} (the text has ${count} [MASK]), got ${maskIndex}`);
  }
}

/** explain's `token`: a string (whether the vocabulary has it is checked against the model). */
export function checkCandidateToken(token: unknown): asserts token is string {
  if (typeof token !== 'string') throw bad(`token must be a string (a candidate fill() returned), got ${typeof token}`);
}

/** The text of fill/explain. */
export function checkText(text: unknown): asserts text is string {
  if (typeof text !== 'string') throw bad(`text must be a string, got ${text === null ? 'null' : typeof text}`);
}

/** fillBatch's texts: an array (each text is checked as it is prepared). */
export function checkTexts(texts: unknown): asserts texts is unknown[] {
  if (!Array.isArray(texts)) throw bad('fillBatch expects an array of strings');
}

function checkObject(options: unknown): void {
  if (typeof options !== 'object' || options === null) throw bad('options must be an object');
}

function checkBoolean(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean') throw bad(`${name} must be true or false, got ${JSON.stringify(value)}`);
}
