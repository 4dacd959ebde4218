/**
 * Types of the Embind module built from wasm/bindings/embind.cc (the C++ core:
 * tokenizer, corpus memory, top-k decoder with fusion, fingerprint cache). This file is the contract between
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
  /**
   * Per mask (same order as maskPositions): the constraint typed after its colon, "[MASK:shang4]"
   * → { text: 'shang4', start, end } (UTF-16 span of the text), or null for a mask without one.
   */
  maskConstraints: ({ text: string; start: number; end: number } | null)[];
}

/** A sound constraint resolved for a vocabulary (soundConstraint), or the user's mistake in it. */
export type SoundConstraintResult =
  | {
      /** The constraint as shown: "shàng", "shang" (any tone), "平", "仄". */
      display: string;
      /** allowed[id] = 1 for the tokens that are one character the constraint accepts. */
      allowed: Uint8Array;
      /** How many tokens it admits (0: none of the vocabulary sounds like that). */
      count: number;
      error?: undefined;
    }
  | { error: string };

/** The readings of one character of a text (readingsOf). */
export interface CharReadings {
  /** UTF-16 span of the character. */
  start: number;
  end: number;
  /** Likeliest first: "shàng" (or "shang4" without marks). */
  readings: string[];
  /** Each reading's tone, 1-4, 5 neutral. */
  tones: Int8Array;
  /** Each reading: 1 standard (modern Mandarin), 0 only a classical dictionary's (汉语大字典). */
  standard: Uint8Array;
  /** Each reading's tone class (中华新韵, pinyin::ClassOf): 1 平, 2 仄, 0 neither (neutral tone). */
  classes: Uint8Array;
}

/** How the decoder fuses a memory with the model (C++ FusionWeights; every field optional). */
export interface FusionOptions {
  model?: number;
  unigram?: number;
  /** 9 weights, by matched n-gram length 0..8. */
  ngram?: Float32Array;
  hitBase?: number;
  hitPerToken?: number;
  hitWhole?: number;
  minHitStrength?: number;
  modelCandidates?: number;
  /** Share of the model's own distribution mixed into the shown one, 0..0.5. */
  floor?: number;
}

export interface DecodeOptions {
  topK: number;
  threshold: number;
  excludeSpecial: boolean;
  excludeSubwords: boolean;
  allowIds: Int32Array;
  denyIds: Int32Array;
  /** Fuse this memory with the model; `decode` then needs the input's ids and mask positions. */
  memory?: WasmMemory;
  fusion?: FusionOptions;
}

export interface DecodedRow {
  ids: Int32Array;
  probabilities: Float32Array;
  /** Probability mass not in `ids` (outside top-k or under the threshold). */
  other: number;
  /** With a memory: per candidate, the famous text / idiom it completes (-1: none), and the unit. */
  hitText?: Int32Array;
  hitUnit?: Uint32Array;
}

export interface MemoryInfo {
  version: number;
  maxOrder: number;
  ngrams: number;
  ngramSlots: number;
  texts: number;
  idioms: number;
  units: number;
  bytes: number;
  /** The builder's JSON description (inputs, cut-offs). */
  build: string;
}

/** Evidence per candidate (Memory.evidence): n-gram gains [n*9 + length], unigram log P, passage hit. */
export interface MemoryEvidence {
  gains: Float32Array;
  unigram: Float32Array;
  hitText: Int32Array;
  hitUnit: Uint32Array;
  hitStrength: Int32Array;
  hitWhole: Uint8Array;
}

export interface WasmMemory {
  info(): MemoryInfo;
  /** Candidate ids the memory proposes for mask number `target`. */
  propose(ids: Int32Array, maskPositions: Int32Array, target: number): Int32Array;
  evidence(
    ids: Int32Array,
    maskPositions: Int32Array,
    target: number,
    candidates: Int32Array,
    minHitStrength: number,
  ): MemoryEvidence;
  /**
   * Work, title, author and the sentence of a hit (hitText, hitUnit from a decoded row); for an
   * idiom of a memory built with the dictionary's readings, its `pinyin` ("diū sān là sì") and the
   * `reading` of the hit's character in it ("là"), else "".
   */
  source(
    text: number,
    unit: number,
  ): { work: string; title: string; author: string; text: string; pinyin: string; reading: string };
  /** log P(token) in the corpus, per vocabulary id. */
  unigram(): Float32Array;
  delete(): void;
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

/** The output layer (head.bin): the tied embedding table and MLM bias, for both ends of a "core" model. */
export interface WasmOutputLayer {
  hiddenSize(): number;
  dtype(): 'int8' | 'f16' | 'f32';
  /** Input embeddings of `ids`: [ids.length * hiddenSize]. Throws for an id outside the vocabulary. */
  embed(ids: Int32Array): Float32Array;
  /** Logits [rows * vocabSize] of `rows` hidden states [rows * hiddenSize]. Throws for non-finite input. */
  logits(hidden: Float32Array, rows: number): Float32Array;
  delete(): void;
}

export interface WasmDecoder {
  /**
   * logits: row-major [nRows, vocabSize]. Throws on NaN/+inf or a bad shape. `ids` and
   * `maskPositions` (row r = the blank at ids[maskPositions[r]]) are required by a decoder with a
   * memory and ignored otherwise (pass undefined). `allowed` (optional): per row, null or the
   * tokens that row's blank may be (a sound constraint's `allowed`); a constrained row's
   * probabilities are renormalised over them.
   */
  decode(
    logits: Float32Array,
    nRows: number,
    vocabSize: number,
    ids: Int32Array | undefined,
    maskPositions: Int32Array | undefined,
    allowed?: (Uint8Array | null)[],
  ): DecodedRow[];
  /** Whether the decoder's options let it propose token `id` (no specials, [unusedN], ## pieces; the filter). */
  eligible(id: number): boolean;
  /** How many tokens it may propose (0: a filter that can never yield a candidate). */
  eligibleCount(): number;
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

/** The characters a wrong one may have been typed for (the spelling check's candidates). */
export interface WasmConfusionSets {
  /**
   * The vocabulary tokens token `id` may stand in for, each once with its closest kind, ordered
   * by kind, then id; empty when `id` is not one character (or out of range). Throws for a
   * non-integer id.
   */
  of(id: number): {
    ids: Int32Array;
    /** Per id (C++ ConfusionKind): 1 the same syllable in any tone (在/再), 2 one fuzzy-pinyin swap
     * (z/zh, c/ch, s/sh, n/l, an/ang, en/eng, in/ing: 四/是), 3 a similar picture (未/末). */
    kinds: Uint8Array;
  };
  delete(): void;
}

export interface CoreModule {
  Tokenizer: new (vocabBytes: Uint8Array, options: TokenizerOptions) => WasmTokenizer;
  Decoder: new (tokenizer: WasmTokenizer, options: DecodeOptions) => WasmDecoder;
  /**
   * Verifies and loads memory.bin for this tokenizer's vocabulary: one file (a whole memory, or a
   * split memory's base alone), or with `ngramBytes` a split memory's two parts (memory-ngrams.bin).
   * Throws an Error whose message starts with
   * "Memory [truncated|not-a-memory|wrong-version|corrupt|wrong-vocab|mismatch]: ".
   * The memory must outlive every Decoder created with it.
   */
  Memory: new (bytes: Uint8Array, tokenizer: WasmTokenizer, ngramBytes?: Uint8Array) => WasmMemory;
  /** Verifies and loads head.bin for a vocabulary of `vocabSize` tokens; throws "OutputLayer: <reason>". */
  OutputLayer: new (bytes: Uint8Array, vocabSize: number) => WasmOutputLayer;
  /**
   * maxBytes bounds keys + values + a fixed per-entry overhead; it may be at most half the
   * build's wasm heap limit (32 MiB in the threaded build, whose heap is a fixed 64 MiB).
   */
  FingerprintCache: new (maxEntries: number, maxBytes: number) => WasmFingerprintCache;
  /**
   * Parses a constraint as typed after "MASK:" ("shang", "shang4", "shàng", "lv4", "平", "仄") and
   * resolves it for the tokenizer's vocabulary; a mistake comes back as { error } (not thrown).
   */
  soundConstraint(tokenizer: WasmTokenizer, text: string): SoundConstraintResult;
  /** Indexes the tokenizer's one-character tokens by sound and shape (it keeps no reference to it). */
  ConfusionSets: new (tokenizer: WasmTokenizer) => WasmConfusionSets;
  /**
   * The readings of every character of `text` that has some (tone marks, or numbers with marks
   * false), likeliest first; with `prefer` (a constraint as soundConstraint takes it, e.g. its
   * display), the readings meeting it first.
   */
  readingsOf(text: string, marks: boolean, prefer: string | undefined): CharReadings[];
  /** Which build was loaded. */
  buildInfo(): { threads: boolean; simd: boolean; version: string };
  /** The wasm heap's current size in bytes (it grows, never shrinks). */
  heapBytes(): number;
}
