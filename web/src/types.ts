/**
 * Public types of the tiankong API, shared by the Node entry (`tiankong`), the browser
 * entry (`tiankong/browser`, a proxy to a Worker) and the Worker itself.
 */
import type { TiankongErrorCode } from './errors.js';
import type { CacheStats } from './core/core-module.js';

export type { TiankongErrorCode };

/** Contents of model.json (format "tiankong-model/1", written by scripts/export-model). */
export interface ModelManifest {
  format: 'tiankong-model/1';
  name: string;
  architecture: { type: string; vocab_size: number; [key: string]: unknown };
  /** Longest input in tokens, including [CLS] and [SEP]. */
  max_length: number;
  tokenizer: {
    vocab: string;
    lowercase: boolean;
    strip_accents: boolean;
    clean_text: boolean;
    handle_chinese_chars: boolean;
  };
  special_tokens: { pad: number; unk: number; cls: number; sep: number; mask: number };
  /** Graph inputs in order; tiankong needs "mask_positions" (the mask-only export). */
  inputs: string[];
  outputs: string[];
  /**
   * What the graph computes: "core" = the hidden states at the masks (inputs_embeds in; the C++
   * core holds the tied embedding table in head.bin and computes input embeddings and logits),
   * "mask-only" = logits at the masks, "full" = logits everywhere (not usable by tiankong).
   */
  logits: 'core' | 'mask-only' | 'full';
  /** With logits "core": the output layer file (tied embedding table + MLM bias) and its table type. */
  head?: { file: string; dtype: 'int8' | 'f16' | 'f32' };
  /**
   * Inputs longer than `threshold` tokens are read through windows of `size` tokens around the
   * masks (the model never sees more at once). Default: the whole input up to max_length.
   * `whole_up_to`: an input of up to this many tokens is still read whole when its windows would
   * read more tokens than it has (masks spread over it) — at most the length the model was trained on.
   */
  window?: { threshold: number; size: number; whole_up_to?: number };
  files: Record<string, { sha256: string; bytes: number }>;
  /** The corpus memory (scripts/build-memory), when the model has one. */
  memory?: ModelMemory;
  /** The spelling check's rule for this model (scripts/tune-check); built-in defaults when absent. */
  check?: ModelCheckRule;
  [key: string]: unknown;
}

/**
 * model.json's "check" block: a position is flagged when a candidate's gain (ln P(candidate) −
 * ln P(original), fused) less its kind's penalty exceeds `threshold` (check's sensitivity 0.5);
 * flags within `suppress_within` tokens of a stronger one are dropped. A null penalty: that kind
 * is never suggested.
 */
export interface ModelCheckRule {
  /**
   * Positions whose suspicion (the best candidate's logit less the original's, in one run over
   * the text as it is) is at most this are taken as right without a masked run; absent: every
   * position is scored masked.
   */
  prefilter?: number;
  /**
   * The masking budget: of the positions above the prefilter, at most
   * max(masked_min, ceil(masked_share × checkable positions)) — the most suspicious — are scored
   * masked (absent: all of them).
   */
  masked_share?: number;
  masked_min?: number;
  threshold: number;
  penalty: { near_sound: number; shape: number; context: number | null };
  suppress_within: number;
  /** How it was tuned (informational). */
  tuned?: Record<string, unknown>;
}

/** model.json's "memory" block: the memory file and how the decoder fuses it with the model. */
export interface ModelMemory {
  /** File name inside the model directory (listed in `files` with its sha256). */
  file: string;
  /**
   * A split memory's second part (scripts/build-memory writes "memory-ngrams.bin"): the n-grams
   * longer than bigrams. `file` alone answers a first preview (famous texts, idioms, bigrams);
   * the engine fuses the two once both have arrived.
   */
  ngrams?: string;
  /** FusionWeights of the C++ core (tuned by scripts/tune-fusion); defaults apply when absent. */
  fusion?: {
    model?: number;
    unigram?: number;
    /** Weight per matched n-gram length, index 0..8 (0 and 1 unused). */
    ngram?: number[];
    hit_base?: number;
    hit_per_token?: number;
    hit_whole?: number;
    min_hit_strength?: number;
    model_candidates?: number;
    /** Share of the model's own distribution in the shown one (0..0.5), fitted with the scale. */
    floor?: number;
  };
  [key: string]: unknown;
}

/** A model already in memory (e.g. bundled by the app or read from IndexedDB). */
export interface ModelBytes {
  modelBytes: Uint8Array | ArrayBuffer;
  vocabBytes: Uint8Array | ArrayBuffer;
  /** The corpus memory, when the manifest lists one (omit it to run without). */
  memoryBytes?: Uint8Array | ArrayBuffer;
  /** The memory's second part (manifest.memory.ngrams), required with memoryBytes when the manifest lists one. */
  memoryNgramsBytes?: Uint8Array | ArrayBuffer;
  /** The output layer (head.bin), required by a "core" model (manifest.logits "core"). */
  headBytes?: Uint8Array | ArrayBuffer;
  manifest: ModelManifest;
}

/**
 * Where the model comes from:
 * - a URL (string or URL) of the model directory, i.e. the folder holding model.json, model.onnx
 *   and vocab.txt (`https://…/models/default/`; relative URLs resolve against the page);
 * - in Node, a local directory path (or a file: URL);
 * - the files' bytes with their manifest.
 */
export type ModelSource = string | URL | ModelBytes;

/** Download/read progress of one model file. */
export interface LoadProgress {
  file: 'model.json' | 'model.onnx' | 'vocab.txt' | 'memory.bin' | 'memory-ngrams.bin' | 'head.bin';
  /** Bytes received so far. */
  loaded: number;
  /** Expected size in bytes (from model.json), 0 when unknown. */
  total: number;
  /** Where the bytes come from. */
  source: 'network' | 'cache' | 'disk' | 'memory';
}

export type Backend = 'wasm' | 'webgpu' | 'auto';

export interface CreateFillMaskOptions {
  /** The model (see {@link ModelSource}). In Node the packaged default model (if installed) is used when omitted. */
  model?: ModelSource;
  /**
   * Intra-op threads of the inference runtime. Default: up to 4 (bounded by the CPU count);
   * 1 in a browser page that is not cross-origin isolated (stats() says why).
   */
  threads?: number;
  /** 'auto' (default): the fastest available (Node: onnxruntime-node when installed, else wasm). */
  backend?: Backend;
  /** Called while model files download or load. */
  onProgress?: (progress: LoadProgress) => void;
  /** Result cache (LRU, keyed by token ids + mask positions + options). Default 1000 entries / 8 MB; 0 disables. */
  cache?: { maxEntries?: number; maxBytes?: number };
  /**
   * Load the model's corpus memory (memory.bin, when model.json lists one) and fuse it with the
   * model. Default true. false: the memory is not even downloaded (fills use the model alone).
   */
  memory?: boolean;
  /**
   * Called once, while the model still loads, with a preview that fills from the corpus memory
   * alone (famous texts, idioms, bigrams: the first part of a split memory, a few MB), so a page
   * can answer before the model has arrived. Its results say `preview: true`; fill again with
   * the model once createFillMask resolves. Not called for a model without a split memory or with
   * `memory: false`. The model's files are read only after the memory's first part (bandwidth goes
   * to the first answer first).
   * @example
   * ```ts
   * const tk = await createFillMask({
   *   onPreview: async (preview) => show(await preview.fill('床前明月光，疑是地[MASK]霜。')),
   * });
   * ```
   */
  onPreview?: (preview: FillMaskPreview) => void;
  /** Cancels loading. */
  signal?: AbortSignal;
}

/**
 * The memory-alone answers given while the model loads (CreateFillMaskOptions.onPreview). Once the
 * model is ready, its fills are the model's (`preview` absent); after the model is disposed they reject DISPOSED.
 */
export interface FillMaskPreview {
  /** As FillMaskModel.fill (`joint` is ignored); the result has `preview: true` until the model is ready. */
  fill(text: string, options?: FillOptions): Promise<FillResult>;
  /** As FillMaskModel.readings (they need no model, so they are final already). */
  readings(text: string): Promise<ReadingsResult>;
}

/** A filter applied to candidates (mapped to token ids once per model). */
export type CandidateFilter =
  /** Only single CJK ideographs. */
  | 'chinese'
  /** No punctuation or symbol tokens. */
  | 'no-punctuation'
  /** Only `allow` tokens (when given), never `deny` tokens. Tokens must exist in the vocabulary. */
  | { allow?: string[]; deny?: string[] };

export interface FillOptions {
  /** Candidates per mask, 1…vocabulary size. Default 5. */
  topK?: number;
  /** Drop candidates with probability below this (0…1). Default 0. */
  threshold?: number;
  filter?: CandidateFilter;
  /**
   * Also decode each run of two or more adjacent masks as a whole word (`FillResult.words`):
   * the masks are filled one at a time, most confident first, re-running the model after each,
   * under a beam of `beam` hypotheses. `masks` (independent per-mask lists) is unchanged.
   */
  joint?: boolean;
  /** Beam width of joint decoding, 1 (greedy iterative filling) … 32. Default 5. Only with `joint: true`. */
  beam?: number;
  /**
   * Fuse the corpus memory with the model (default true when the model has one loaded): famous
   * lines, idioms and frequent phrases of the training corpus raise their candidates, which then
   * carry a `source`. false: the model alone.
   */
  memory?: boolean;
  /**
   * How each mask must sound, in mask order: a syllable with any tone (`'shang'`), with its tone
   * (`'shang4'` or `'shàng'`; ü as `ü`, `v` or `u:`), a tone class of 中华新韵 (`'平'`: tones 1–2,
   * `'仄'`: tones 3–4; a polyphone matches if any reading does), or null for a mask without a
   * constraint. The same as writing `[MASK:shang4]` in the text (a mask constrained in both places
   * is BAD_OPTION). The mask's candidates are then only characters that sound so, with
   * probabilities renormalised over them (`FillMask.constraint` says which constraint applied).
   *
   * ```js
   * await tk.fill('床前明月光，疑是地[MASK]霜', { constraints: ['shang'] }); // 上 first
   * await tk.fill('春风又绿江南[MASK:an4]');                               // 岸 first
   * ```
   */
  constraints?: (string | null)[];
  /** Cancels the request if it has not finished (e.g. superseded by a newer keystroke). */
  signal?: AbortSignal;
}

export interface FillCandidate {
  /** The vocabulary token. */
  token: string;
  /** Probability (softmax over the full vocabulary at this mask). */
  score: number;
  /** The input text with this mask replaced by `token` (other masks left as they are). */
  sequence: string;
  /** The famous text or idiom this candidate completes (出处), when the memory found one. */
  source?: CandidateSource;
  /**
   * The token's Mandarin readings with tone marks, likeliest first (["xíng", "háng"] for 行; for a
   * blank with a sound constraint, the readings that meet it first); [] when it has none (punctuation, Latin).
   */
  pinyin: string[];
}

/** Where a candidate comes from: e.g. 上 in 疑是地[MASK]霜 → 千家诗, 静夜思, 李白, 床前明月光，疑是地上霜。 */
export interface CandidateSource {
  /** The collection, e.g. "千家诗", "论语"; "成语" for an idiom. */
  work: string;
  /** The text's title, e.g. "静夜思"; the idiom itself for an idiom. */
  title: string;
  /** "" when unknown (and for idioms). */
  author: string;
  /** The sentence of the text the candidate completes (the idiom for an idiom). */
  text: string;
  /**
   * An idiom's reading as the idiom dictionary gives it ("diū sān là sì"), where the memory has
   * it; the candidate's `pinyin` then starts with its character's reading in the idiom.
   */
  pinyin?: string;
}

export interface FillMask {
  /** 0-based index of this mask among the masks of the text. */
  index: number;
  /** UTF-16 offsets of the mask in the input text: `text.slice(start, end)` is e.g. "[MASK]". */
  start: number;
  end: number;
  /** Sorted by score, highest first. */
  candidates: FillCandidate[];
  /** Probability mass not shown in `candidates` (outside top-k, under the threshold, or filtered). */
  other: number;
  /**
   * The mask's sound constraint as applied ("shàng", "shang", "平", "仄"), when it has one; the
   * scores are then over the characters that meet it.
   */
  constraint?: string;
}

/** A whole-word candidate for a run of adjacent masks (joint decoding). */
export interface WordCandidate {
  /** The tokens joined, e.g. "盗铃". */
  text: string;
  /** One token per mask of the run, left to right. */
  tokens: string[];
  /**
   * Joint score: the product, over the run's masks in the order they were filled, of the
   * probability (softmax over the full vocabulary) of the chosen token given the text with the
   * tokens chosen before it filled in. The order is most confident first: at each step, the
   * open mask whose best eligible candidate is the most probable (leftmost on ties). Other masks
   * of the text stay [MASK]. See docs/attribution-and-joint.md.
   */
  score: number;
  /** The input text with this run replaced by `text` (other masks left as they are). */
  sequence: string;
  /** One reading per token (its likeliest, or the likeliest meeting its mask's constraint); "" for a token without one. */
  pinyin: string[];
}

/** A run of two or more masks at adjacent token positions, decoded jointly. */
export interface FillWord {
  /** UTF-16 offsets of the run in the input text (first mask's start to last mask's end). */
  start: number;
  end: number;
  /** Indices (into `masks`) of the run's masks, left to right. */
  maskIndices: number[];
  /** The final beam, best first (at most min(topK, beam) candidates). */
  candidates: WordCandidate[];
}

export interface FillTimings {
  tokenizeMs: number;
  /** 0 when the result came from the cache. */
  inferenceMs: number;
  decodeMs: number;
  totalMs: number;
}

export interface FillResult {
  /** The input text (lone surrogates replaced by U+FFFD; same length, so offsets apply to both). */
  text: string;
  masks: FillMask[];
  /** `masks[i].other` for each mask, for convenience. */
  other: number[];
  /** Only with `joint: true`: one entry per run of two or more adjacent masks, left to right. */
  words?: FillWord[];
  /** True when the result came from the cache (no model run). */
  cached: boolean;
  /**
   * True for a preview's answer (CreateFillMaskOptions.onPreview): the corpus memory alone, before
   * the model and the rest of the memory had arrived. Absent on the model's answers.
   */
  preview?: true;
  timings: FillTimings;
}

export interface ExplainOptions {
  /** Cancels the request (checked between the model runs). */
  signal?: AbortSignal;
}

/** One input token with its attribution score. */
export interface ExplainedToken {
  /** The vocabulary token ("[MASK]", "[UNK]" and "##" pieces included as they are). */
  token: string;
  /** UTF-16 offsets of the token in the input text. */
  start: number;
  end: number;
  /**
   * log P(candidate | text) − log P(candidate | text with this token replaced by [MASK]), natural
   * log: positive when the token supports the candidate. null for [MASK] tokens (nothing to occlude).
   */
  score: number | null;
}

export interface ExplainResult {
  /** The input text (lone surrogates replaced by U+FFFD). */
  text: string;
  maskIndex: number;
  /** The candidate explained. */
  token: string;
  /** How the scores were computed: each token replaced by [MASK] in turn (one model run each). */
  method: 'occlusion';
  /** log P(token) at the mask in the unmodified text (softmax over the full vocabulary). */
  logProb: number;
  /** Every token of the text except [CLS] and [SEP], in order. */
  tokens: ExplainedToken[];
  /** Indices into `tokens` of the (up to) 3 highest positive scores, highest first. */
  top: number[];
  /** True when the result came from the cache (no model run). */
  cached: boolean;
  timings: { tokenizeMs: number; inferenceMs: number; totalMs: number; runs: number };
}

export interface CheckOptions {
  /**
   * How readily a character is flagged, 0 to 1 (default 0.5, the threshold tuned on a dev error
   * set; higher flags more, with more false alarms).
   */
  sensitivity?: number;
  /** Characters or words never flagged (names, terms): every occurrence in the text is left alone. */
  keep?: string[];
  /** Fuse the corpus memory into the scoring (default true when the model has one). */
  memory?: boolean;
  /** Cancels the request (checked between the model runs). */
  signal?: AbortSignal;
}

/** A suggestion for one flagged character. */
export interface CheckCandidate {
  token: string;
  /** P(token) / (P(token) + P(original)) at the position, model and memory fused: above 0.5. */
  score: number;
  /** Readings of the token, likeliest first. */
  pinyin: string[];
}

/** A character that is likely wrong. */
export interface CheckCorrection {
  /** UTF-16 offsets into `text`. */
  start: number;
  end: number;
  original: string;
  /** The best candidate (candidates[0].token). */
  suggestion: string;
  /** candidates[0].score. */
  score: number;
  /** How the suggestion relates to the original: it sounds alike, looks alike, or only fits the context. */
  kind: 'sound' | 'shape' | 'context';
  /** Every candidate that passes the sensitivity, best first (at most 5). */
  candidates: CheckCandidate[];
}

export interface CheckResult {
  /** The input text (lone surrogates replaced by U+FFFD). */
  text: string;
  /** `text` with every suggestion applied. */
  corrected: string;
  /** In text order. */
  corrections: CheckCorrection[];
  /** Characters scored (one masked copy of the text each). */
  checked: number;
  /** True when the scoring came from the cache (no model run). */
  cached: boolean;
  timings: { tokenizeMs: number; inferenceMs: number; decodeMs: number; totalMs: number; runs: number };
}

/** The tone class of a reading (中华新韵: tones 1-2 平, 3-4 仄; the neutral tone is neither). */
export type ToneClass = '平' | '仄' | '轻声';

/** One character of a text with its readings and tone class (FillMaskModel.readings). */
export interface CharReading {
  /** The character, and its UTF-16 span in the result's `text`. */
  char: string;
  start: number;
  end: number;
  /**
   * Its readings with tone marks, likeliest first: the standard ones (modern Mandarin), or, for a
   * character modern dictionaries do not list, the classical ones (汉语大字典).
   */
  pinyin: string[];
  /**
   * The class of its likeliest reading that has a tone (a neutral one, such as 仙's in 神仙, is
   * passed over); 轻声 only when every reading is neutral.
   */
  tone: ToneClass;
  /** Its readings fall in both 平 and 仄 (a polyphone whose class depends on the word, e.g. 看 kàn/kān). */
  polyphone: boolean;
}

export interface ReadingsResult {
  /** The input text (lone surrogates replaced by U+FFFD). */
  text: string;
  /** Every character that has a reading, in order (punctuation, Latin and digits have none). */
  chars: CharReading[];
}

/** Result-cache counters, exactly as the C++ fingerprint cache reports them. */
export type { CacheStats };

export interface FillMaskStats {
  cache: CacheStats;
  /** The inference backend actually used: 'wasm' (onnxruntime-web), 'webgpu', or 'native' (onnxruntime-node). */
  backend: 'wasm' | 'webgpu' | 'native';
  /** Why this backend (e.g. the reason a requested WebGPU fell back to wasm). */
  backendReason: string;
  /** Inference threads in use. */
  threads: number;
  /** Why this many threads (e.g. "page is not cross-origin isolated"). */
  threadsReason: string;
  /** Whether the wasm code uses SIMD. */
  simd: boolean;
  /** The C++ core build in use. */
  core: { build: 'threads' | 'single'; reason: string; version: string };
  model: { name: string; vocabSize: number; maxLength: number; source: string };
  /** The corpus memory in use, or null (none listed, or createFillMask({ memory: false })). */
  memory: { bytes: number; ngrams: number; texts: number; idioms: number; maxOrder: number } | null;
  /** Model runs so far (cache hits do not run the model; a batched run of several inputs counts one). */
  runs: number;
}

/** A loaded model, ready to fill masks. Create it with `createFillMask`. */
export interface FillMaskModel {
  /**
   * Fills every [MASK] of `text` in one model run. Nothing is ever truncated: a text longer
   * than the model's `max_length` rejects with TOO_LONG (giving its token count and the limit).
   * Equal token ids with equal options are answered from the cache (`cached: true`).
   * @example
   * ```ts
   * const result = await tk.fill('春眠不觉晓，处处闻啼[MASK]。', { topK: 3 });
   * console.log(result.masks[0].candidates.map((c) => `${c.token} ${c.score.toFixed(3)}`));
   * ```
   */
  fill(text: string, options?: FillOptions): Promise<FillResult>;
  /**
   * Fills several texts, each in its own model run, in order. They are deliberately not padded
   * into one batch: the INT8 model quantizes activations per tensor (DynamicQuantizeLinear), so
   * in a padded batch a text's scores would depend on its neighbours. Every text is checked
   * before anything runs; a bad one rejects the call with `error.index` set.
   * @example
   * ```ts
   * const [a, b] = await tk.fillBatch(['[MASK]天', '秋[MASK]'], { topK: 1 });
   * ```
   */
  fillBatch(texts: string[], options?: FillOptions): Promise<FillResult[]>;
  /**
   * Attribution by occlusion: how much each token of `text` supports `token` at mask number
   * `maskIndex` (0-based). Each non-mask token is replaced by [MASK] in turn; its score is the
   * drop in the candidate's log-probability. The text and its occluded copies share batched model
   * runs when the model computes in float32 (the default model); a dynamic-INT8 model runs each
   * alone (batching would let its activation quantization mix the variants). Cached like fill.
   * @example
   * ```ts
   * const { tokens, top } = await tk.explain('掩耳盗[MASK]', 0, '铃');
   * console.log(top.map((i) => `${tokens[i].token} ${tokens[i].score.toFixed(2)}`));
   * ```
   */
  explain(text: string, maskIndex: number, token: string, options?: ExplainOptions): Promise<ExplainResult>;
  /**
   * Spelling check (纠错): the characters of `text` that are likely wrong, each with what it
   * should be (same-length substitutions: homophones, near homophones, look-alikes, and
   * characters only the context rejects). Every Chinese character is masked in turn and scored
   * by the model and the memory against its confusions, in batched runs; numbers, Latin text and
   * punctuation are left alone. An empty text has nothing to correct. Cached like fill.
   * @example
   * ```ts
   * const { corrected, corrections } = await tk.check('我门再接再励，以经快完成了');
   * console.log(corrected, corrections.map((c) => `${c.original}→${c.suggestion}`));
   * ```
   */
  check(text: string, options?: CheckOptions): Promise<CheckResult>;
  /**
   * Each character's readings and tone class (平仄) for a line of poetry or any text, from the
   * core's pinyin table (Unihan); no model run. At most 100 000 UTF-16 units (else TOO_LONG).
   * @example
   * ```ts
   * const { chars } = await tk.readings('春风又绿江南岸');
   * console.log(chars.map((c) => `${c.char}${c.tone}${c.polyphone ? '?' : ''}`).join(' '));
   * // 春平 风平 又仄 绿仄 江平 南平 岸仄
   * ```
   */
  readings(text: string): Promise<ReadingsResult>;
  /** Cache, backend and thread information (synchronous: a snapshot kept current after every call). */
  stats(): FillMaskStats;
  /** Frees the model, the inference session and all threads. Later calls reject with DISPOSED. */
  dispose(): Promise<void>;
}
