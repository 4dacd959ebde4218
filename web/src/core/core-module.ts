/**
 * Types of the Embind module built from wasm/bindings/embind.cc (the C++ core:
 * tokenizer, top-k decoder, fingerprint cache). This file is the contract between
 * the bindings and the TypeScript runtime; it holds no logic.
 *
 * Offsets are UTF-16 code units of the string passed to `encode` (JS string indices).
 * Objects created with `new` live on the wasm heap: call `delete()` when done.
 */

export interface TokenizerOptions {
  cleanText: boolean;
  handleChineseChars: boolean;
  stripAccents: boolean;
  lowercase: boolean;
  maxInputCharsPerWord: number;
  /** Including [CLS] and [SEP]. */
  maxLength: number;
}

export interface EncodeResult {
  ids: Int32Array;
  /** Flattened [start0, end0, start1, end1, ...], UTF-16 code units, half-open. */
  offsets: Uint32Array;
  /** Indices into `ids` of the mask tokens, in order. */
  maskPositions: Int32Array;
  /** Content tokens dropped because the text exceeded maxLength (0 = none). */
  truncatedTokens: number;
}

export interface DecodeOptions {
  topK: number;
  threshold: number;
  excludeSpecial: boolean;
  excludeSubwords: boolean;
  allowIds: Int32Array;
  denyIds: Int32Array;
}

export interface DecodedRow {
  ids: Int32Array;
  probabilities: Float32Array;
  /** Probability mass not in `ids` (outside top-k or under the threshold). */
  other: number;
}

export interface CacheStats {
  hits: number;
  misses: number;
  evictions: number;
  entries: number;
  bytes: number;
  maxEntries: number;
  maxBytes: number;
}

export interface WasmTokenizer {
  /**
   * Throws an Error whose message names the problem (e.g. a non-string argument). Lone
   * surrogates are replaced with U+FFFD (one UTF-16 unit too, so offsets still index `text`).
   */
  encode(text: string): EncodeResult;
  vocabSize(): number;
  idToToken(id: number): string;
  /** -1 when absent. */
  tokenToId(token: string): number;
  specialIds(): { pad: number; unk: number; cls: number; sep: number; mask: number };
  delete(): void;
}

export interface WasmDecoder {
  /** logits: row-major [nRows, vocabSize]. Throws on NaN/+inf or a bad shape. */
  decode(logits: Float32Array, nRows: number, vocabSize: number): DecodedRow[];
  delete(): void;
}

export interface WasmFingerprintCache {
  /** Returns the stored string or undefined. Key = exact ids + mask positions + options fingerprint. */
  get(ids: Int32Array, maskPositions: Int32Array, optionsFingerprint: string): string | undefined;
  put(ids: Int32Array, maskPositions: Int32Array, optionsFingerprint: string, value: string): void;
  clear(): void;
  stats(): CacheStats;
  delete(): void;
}

export interface CoreModule {
  Tokenizer: new (vocabBytes: Uint8Array, options: TokenizerOptions) => WasmTokenizer;
  Decoder: new (tokenizer: WasmTokenizer, options: DecodeOptions) => WasmDecoder;
  /**
   * maxBytes bounds keys + values + a fixed per-entry overhead; it may be at most half the
   * build's wasm heap limit (32 MiB in the threaded build, whose heap is a fixed 64 MiB).
   */
  FingerprintCache: new (maxEntries: number, maxBytes: number) => WasmFingerprintCache;
  /** Which build was loaded. */
  buildInfo(): { threads: boolean; simd: boolean; version: string };
}
