/**
 * The fill-mask engine, shared by Node (in-process) and browsers (inside the Worker):
 * tokenize (C++ core) → result-cache lookup (C++ core) → one ONNX Runtime run for all the
 * masks of a text (input_ids, attention_mask, [token_type_ids], mask_positions; int64) →
 * top-k decode (C++ core) → cache put. One InferenceSession per model, runs serialized.
 * Attribution (explain.ts) and joint decoding of adjacent masks (joint.ts) drive the same
 * session through `logitsOf` and cache their results in the same cache, with their own fingerprints.
 */
import type {
  CoreModule, DecodedRow, FusionOptions, WasmDecoder, WasmFingerprintCache, WasmMemory, WasmTokenizer,
} from './core/core-module.js';
import { type LoadedCore, loadCore } from './core/load-core.js';
import { TiankongError, describe, throwIfAborted } from './errors.js';
import { type MaskedLogits, type Occlusion, occlude, topScores } from './explain.js';
import { filterIds, filterKey } from './filters.js';
import { type JointFill, adjacentMaskRuns, decodeRunJointly } from './joint.js';
import type { LoadedModel } from './model-source.js';
import { SerialQueue } from './run-queue.js';
import type { InferenceRuntime, OrtSession, OrtTensor } from './runtime.js';
import type {
  CandidateSource, ExplainOptions, ExplainResult, FillMask, FillMaskStats, FillOptions, FillResult, FillWord, ModelManifest,
} from './types.js';

export const DEFAULT_TOP_K = 5;
export const DEFAULT_CACHE = { maxEntries: 1000, maxBytes: 8 << 20 };
export const DEFAULT_BEAM = 5;
/** Joint decoding costs up to 1 + beam·(masks − 1) model runs per run of masks. */
const MAX_BEAM = 32;
/** How many tokens `explain` marks as the strongest support. */
const EXPLAIN_TOP = 3;
/** Decoders kept per engine (one per distinct topK/threshold/filter). */
const MAX_DECODERS = 16;
/** BERT WordPiece never splits words longer than this (HF default). */
const MAX_INPUT_CHARS_PER_WORD = 100;

export interface EngineSetup {
  model: LoadedModel;
  core: LoadedCore;
  runtime: InferenceRuntime;
  cache?: { maxEntries?: number; maxBytes?: number };
}

/** A text after tokenization, before inference. */
interface Encoded {
  text: string;
  ids: Int32Array;
  offsets: Uint32Array;
  maskPositions: Int32Array;
  started: number;
  tokenizeMs: number;
}

/** A fill request after tokenization and option checks. */
interface Prepared extends Encoded {
  decoding: Decoding;
  joint: JointSettings | null;
}

/** Joint decoding settings: the beam and a decoder proposing `beam` candidates per row. */
interface JointSettings {
  beam: number;
  topK: number;
  decoding: Decoding;
}

/** A decoder for one set of decode options, with the fingerprint that keys its cached results. */
interface Decoding {
  decoder: WasmDecoder;
  fingerprint: string;
}

/**
 * What the result cache stores per text: the decoded rows (token level, text independent);
 * `src[k]` is candidate k's memory hit as [text, unit] (null: none), when the memory was used.
 */
type CachedRows = { ids: number[]; p: number[]; other: number; src?: ([number, number] | null)[] }[];
/** Cached joint decoding: the final beam of each run of adjacent masks. */
type CachedWords = { maskIndices: number[]; fills: JointFill[] }[];

const now = (): number => performance.now();

export class FillMaskEngine {
  private readonly queue = new SerialQueue();
  private readonly decodings = new Map<string, Decoding>();
  private vocab: string[] | null = null;
  private readonly sources = new Map<string, CandidateSource>();
  private disposed = false;
  private runs = 0;
  private lastStats: FillMaskStats;

  private constructor(
    private readonly core: LoadedCore,
    private readonly runtime: InferenceRuntime,
    private readonly model: Omit<LoadedModel, 'modelBytes' | 'vocabBytes'>,
    private readonly tokenizer: WasmTokenizer,
    private readonly session: OrtSession,
    private readonly cache: WasmFingerprintCache,
    private readonly memory: WasmMemory | null,
    private readonly fusion: FusionOptions,
  ) {
    this.lastStats = this.collectStats();
  }

  /** Builds the tokenizer, the inference session and the cache; checks the model against its manifest. */
  static async create(setup: EngineSetup): Promise<FillMaskEngine> {
    const { model, core, runtime } = setup;
    const { manifest } = model;
    const module: CoreModule = core.module;
    const cacheOptions = { ...DEFAULT_CACHE, ...setup.cache };
    for (const [name, value] of Object.entries(cacheOptions)) {
      if (!Number.isInteger(value) || value < 0) {
        throw new TiankongError('BAD_OPTION', `tiankong: cache.${name} must be a non-negative integer, got ${value}`);
      }
    }
    let tokenizer: WasmTokenizer;
    try {
      tokenizer = new module.Tokenizer(model.vocabBytes, {
        cleanText: manifest.tokenizer.clean_text,
        handleChineseChars: manifest.tokenizer.handle_chinese_chars,
        stripAccents: manifest.tokenizer.strip_accents,
        lowercase: manifest.tokenizer.lowercase,
        maxInputCharsPerWord: MAX_INPUT_CHARS_PER_WORD,
        maxLength: manifest.max_length,
      });
    } catch (error) {
      throw new TiankongError('BAD_MODEL', `tiankong: ${model.source}: ${manifest.tokenizer.vocab}: ${describe(error)}`);
    }
    let session: OrtSession | undefined;
    let memory: WasmMemory | null = null;
    try {
      checkVocabulary(tokenizer, model);
      try {
        session = await runtime.ort.InferenceSession.create(model.modelBytes, runtime.sessionOptions);
      } catch (error) {
        throw new TiankongError('BAD_MODEL', `tiankong: ${model.source}: model.onnx cannot be loaded by ONNX Runtime ` +
          `(${runtime.backend}): ${describe(error)}`);
      }
      checkGraph(session, model);
      const fusion = fusionOptions(manifest, model.source);
      if (model.memoryBytes) {
        try {
          memory = new module.Memory(model.memoryBytes, tokenizer);
        } catch (error) {
          throw new TiankongError('BAD_MODEL', `tiankong: ${model.source}: ${manifest.memory!.file}: ` +
            `${describe(error).replace(/^Memory /, '')}; rebuild it for this model (scripts/build-memory) or load ` +
            'the model without it: createFillMask({ memory: false })');
        }
      }
      const cache = new module.FingerprintCache(cacheOptions.maxEntries, cacheOptions.maxBytes);
      const { modelBytes: _m, vocabBytes: _v, memoryBytes: _b, ...description } = model; // the core holds its own copies
      return new FillMaskEngine(core, runtime, description, tokenizer, session, cache, memory, fusion);
    } catch (error) {
      memory?.delete();
      tokenizer.delete();
      await session?.release().catch(() => undefined);
      throw error;
    }
  }

  /** See FillMaskModel.fill. */
  async fill(text: string, options: FillOptions = {}): Promise<FillResult> {
    const prepared = this.prepare(text, options);
    return this.complete(prepared, options.signal);
  }

  /** See FillMaskModel.explain. */
  async explain(text: string, maskIndex: number, token: string, options: ExplainOptions = {}): Promise<ExplainResult> {
    const started = now();
    this.throwIfDisposed();
    if (typeof options !== 'object' || options === null) throw new TiankongError('BAD_OPTION', 'tiankong: options must be an object');
    const item = this.encode(text, started);
    const count = item.maskPositions.length;
    if (!Number.isInteger(maskIndex) || maskIndex < 0 || maskIndex >= count) {
      throw new TiankongError('BAD_OPTION', `tiankong: maskIndex must be an integer from 0 to ${count - 1} (the text has ` +
        `${count} [MASK]), got ${maskIndex}`);
    }
    if (typeof token !== 'string') {
      throw new TiankongError('BAD_OPTION', `tiankong: token must be a string (a candidate fill() returned), got ${typeof token}`);
    }
    const candidateId = this.tokenizer.tokenToId(token);
    if (candidateId < 0) {
      throw new TiankongError('BAD_OPTION', `tiankong: token ${JSON.stringify(token)} is not in the model's vocabulary; ` +
        'explain a candidate token that fill() returned');
    }
    const target = item.maskPositions[maskIndex]!;
    const positions = Int32Array.of(target);
    const fingerprint = `explain|${candidateId}`;
    const hit = this.cache.get(item.ids, positions, fingerprint);
    let occlusion: Occlusion;
    let inferenceMs = 0;
    let runs = 0;
    if (hit !== undefined) {
      occlusion = JSON.parse(hit) as Occlusion;
    } else {
      ({ occlusion, inferenceMs, runs } = await this.queue.run(async () => {
        const runsBefore = this.runs;
        const inferenceStarted = now();
        const result = await occlude(this.logitsOf, item.ids, target, candidateId, this.tokenizer.specialIds().mask,
          this.tokenizer.vocabSize(), () => throwIfAborted(options.signal));
        if (!this.disposed) this.cache.put(item.ids, positions, fingerprint, JSON.stringify(result));
        return { occlusion: result, inferenceMs: now() - inferenceStarted, runs: this.runs - runsBefore };
      }, options.signal));
    }
    const vocab = this.tokens();
    const tokens = occlusion.scores.map((score, k) => ({
      token: vocab[item.ids[k + 1]!]!, start: item.offsets[2 * (k + 1)]!, end: item.offsets[2 * (k + 1) + 1]!, score,
    }));
    return {
      text: item.text, maskIndex, token, method: 'occlusion', logProb: occlusion.logProb, tokens,
      top: topScores(occlusion.scores, EXPLAIN_TOP), cached: hit !== undefined,
      timings: { tokenizeMs: item.tokenizeMs, inferenceMs, totalMs: now() - started, runs },
    };
  }

  /** See FillMaskModel.fillBatch: every text is checked before any runs. */
  async fillBatch(texts: string[], options: FillOptions = {}): Promise<FillResult[]> {
    if (!Array.isArray(texts)) throw new TiankongError('BAD_OPTION', 'tiankong: fillBatch expects an array of strings');
    const prepared = texts.map((text, index) => {
      try {
        return this.prepare(text, options);
      } catch (error) {
        if (error instanceof TiankongError && error.code !== 'DISPOSED' && error.code !== 'BAD_OPTION') {
          error.message = `texts[${index}]: ${error.message}`;
          error.index = index;
        }
        throw error;
      }
    });
    const results: FillResult[] = [];
    for (const item of prepared) results.push(await this.complete(item, options.signal));
    return results;
  }

  stats(): FillMaskStats {
    if (!this.disposed) this.lastStats = this.collectStats();
    return this.lastStats;
  }

  /** Waits for the running inference, rejects queued ones with DISPOSED, frees everything. Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.lastStats = this.collectStats();
    this.disposed = true;
    await this.queue.close(disposedMessage());
    for (const { decoder } of this.decodings.values()) decoder.delete();
    this.decodings.clear();
    this.memory?.delete(); // after the decoders that point to it
    this.cache.delete();
    this.tokenizer.delete();
    await this.session.release().catch(() => undefined);
    this.core.dispose();
  }

  private prepare(text: string, options: FillOptions): Prepared {
    const started = now();
    this.throwIfDisposed();
    const decoding = this.decodingFor(options);
    const joint = this.jointFor(options);
    return { ...this.encode(text, started), decoding, joint };
  }

  /** Tokenizes a text that must hold at least one [MASK] and fit the model. */
  private encode(text: string, started: number): Encoded {
    if (typeof text !== 'string') {
      throw new TiankongError('BAD_OPTION', `tiankong: text must be a string, got ${text === null ? 'null' : typeof text}`);
    }
    const wellFormed = toWellFormed(text);
    const tokenizeStarted = now();
    const encoding = this.tokenizer.encode(wellFormed);
    const tokenizeMs = now() - tokenizeStarted;
    if (encoding.ids.length <= 2 && encoding.truncatedTokens === 0) {
      // Only [CLS] and [SEP]: nothing but whitespace, or characters the tokenizer drops (zero-width, control, format).
      const what = wellFormed.trim() === '' ? 'is empty' : 'has only invisible characters (zero-width, control or format characters)';
      throw new TiankongError('EMPTY_INPUT', `tiankong: the text ${what}; write a sentence with [MASK] where a character is missing`);
    }
    const maxLength = this.model.manifest.max_length;
    if (encoding.truncatedTokens > 0) {
      const tokens = encoding.ids.length - 2 + encoding.truncatedTokens;
      throw new TiankongError('TOO_LONG', `tiankong: the text is ${tokens} tokens long but the model reads at most ` +
        `${maxLength - 2} (plus [CLS] and [SEP]); shorten it to the sentence around the [MASK]`);
    }
    if (encoding.maskPositions.length === 0) {
      throw new TiankongError('NO_MASK', 'tiankong: the text has no [MASK]; write [MASK] (or ［MASK］) where a character should be filled in');
    }
    return { text: wellFormed, ids: encoding.ids, offsets: encoding.offsets, maskPositions: encoding.maskPositions, started, tokenizeMs };
  }

  private async complete(item: Prepared, signal?: AbortSignal): Promise<FillResult> {
    const { ids, maskPositions, decoding } = item;
    const hit = this.cache.get(ids, maskPositions, decoding.fingerprint);
    let rows: CachedRows;
    let inferenceMs = 0;
    let decodeMs = 0;
    if (hit !== undefined) {
      rows = JSON.parse(hit) as CachedRows;
    } else {
      const inferred = await this.queue.run(() => this.infer(item), signal);
      ({ rows, inferenceMs, decodeMs } = inferred);
    }
    let cached = hit !== undefined;
    let words: CachedWords | undefined;
    if (item.joint) {
      const joint = await this.decodeWords(item, item.joint, signal);
      words = joint.words;
      inferenceMs += joint.inferenceMs;
      cached &&= joint.cached;
    }
    const decodeStarted = now();
    const vocab = this.tokens();
    const masks: FillMask[] = rows.map((row, index) => {
      const start = item.offsets[2 * maskPositions[index]!]!;
      const end = item.offsets[2 * maskPositions[index]! + 1]!;
      const before = item.text.slice(0, start);
      const after = item.text.slice(end);
      const candidates = row.ids.map((id, k) => {
        const token = vocab[id]!;
        const hit = row.src?.[k];
        const source = hit ? this.sourceOf(hit[0], hit[1]) : undefined;
        return { token, score: row.p[k]!, sequence: before + token + after, ...(source ? { source } : {}) };
      });
      return { index, start, end, candidates, other: row.other };
    });
    const wordsResult = words && item.joint ? this.wordsOf(item.text, masks, words, item.joint.topK) : undefined;
    decodeMs += now() - decodeStarted;
    return {
      text: item.text, masks, other: masks.map((m) => m.other), ...(wordsResult ? { words: wordsResult } : {}), cached,
      timings: { tokenizeMs: item.tokenizeMs, inferenceMs, decodeMs, totalMs: now() - item.started },
    };
  }

  /** Joint decoding of every run of adjacent masks (from the cache, or in one queued task). */
  private async decodeWords(item: Prepared, joint: JointSettings, signal?: AbortSignal):
    Promise<{ words: CachedWords; inferenceMs: number; cached: boolean }> {
    const { ids, maskPositions } = item;
    const fingerprint = `joint|${joint.decoding.fingerprint}`;
    const hit = this.cache.get(ids, maskPositions, fingerprint);
    if (hit !== undefined) return { words: JSON.parse(hit) as CachedWords, inferenceMs: 0, cached: true };
    return this.queue.run(async () => {
      const started = now();
      const vocabSize = this.tokenizer.vocabSize();
      const decode = (logits: Float32Array, rows: number, sequence: Int32Array, open: Int32Array) =>
        decodeLogits(joint.decoding.decoder, logits, rows, vocabSize, sequence, open);
      const words: CachedWords = [];
      for (const maskIndices of adjacentMaskRuns(maskPositions)) {
        const positions = maskIndices.map((index) => maskPositions[index]!);
        const fills = await decodeRunJointly(this.logitsOf, decode, ids, positions, joint.beam, () => throwIfAborted(signal));
        words.push({ maskIndices, fills });
      }
      if (!this.disposed) this.cache.put(ids, maskPositions, fingerprint, JSON.stringify(words));
      return { words, inferenceMs: now() - started, cached: false };
    }, signal);
  }

  /** Cached token-level words → the public form for this text (offsets and sequences follow `text`). */
  private wordsOf(text: string, masks: FillMask[], words: CachedWords, topK: number): FillWord[] {
    const vocab = this.tokens();
    return words.map(({ maskIndices, fills }) => {
      const start = masks[maskIndices[0]!]!.start;
      const end = masks[maskIndices[maskIndices.length - 1]!]!.end;
      const candidates = fills.slice(0, topK).map(({ ids, score }) => {
        const tokens = ids.map((id) => vocab[id]!);
        const word = tokens.join('');
        return { text: word, tokens, score, sequence: text.slice(0, start) + word + text.slice(end) };
      });
      return { start, end, maskIndices, candidates };
    });
  }

  /** One model run (inside the queue) + decode + cache put. The put happens even if the caller gave up. */
  private async infer(item: Prepared): Promise<{ rows: CachedRows; inferenceMs: number; decodeMs: number }> {
    const { ids, maskPositions } = item;
    const started = now();
    const logits = await this.logitsOf(ids, maskPositions);
    const inferenceMs = now() - started;
    const decodeStarted = now();
    const decoded = decodeLogits(item.decoding.decoder, logits, maskPositions.length, this.tokenizer.vocabSize(), ids, maskPositions);
    const rows: CachedRows = decoded.map((row) => ({
      ids: Array.from(row.ids), p: Array.from(row.probabilities), other: row.other,
      ...(row.hitText && Array.from(row.hitText).some((t) => t >= 0)
        ? { src: Array.from(row.hitText, (t, k): [number, number] | null => (t >= 0 ? [t, row.hitUnit![k]!] : null)) } : {}),
    }));
    if (!this.disposed) this.cache.put(ids, maskPositions, item.decoding.fingerprint, JSON.stringify(rows));
    return { rows, inferenceMs, decodeMs: now() - decodeStarted };
  }

  /** One run of the mask-only graph on one sequence (call inside the queue): logits [positions, vocab]. */
  private readonly logitsOf: MaskedLogits = async (ids, maskPositions) => {
    const { ort } = this.runtime;
    const seq = ids.length;
    const feeds: Record<string, OrtTensor> = {};
    for (const name of this.session.inputNames) {
      if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, seq]);
      else if (name === 'attention_mask') feeds[name] = new ort.Tensor('int64', new BigInt64Array(seq).fill(1n), [1, seq]);
      else if (name === 'token_type_ids') feeds[name] = new ort.Tensor('int64', new BigInt64Array(seq), [1, seq]);
      else feeds[name] = new ort.Tensor('int64', BigInt64Array.from(maskPositions, BigInt), [1, maskPositions.length]);
    }
    let logits: OrtTensor | undefined;
    try {
      logits = (await this.session.run(feeds))['logits'];
    } catch (error) {
      throw new TiankongError('BAD_MODEL', `tiankong: ONNX Runtime failed to run the model: ${describe(error)}`);
    }
    this.runs++;
    const vocabSize = this.tokenizer.vocabSize();
    const nMasks = maskPositions.length;
    if (!logits || !(logits.data instanceof Float32Array) || logits.dims.join() !== `1,${nMasks},${vocabSize}`) {
      throw new TiankongError('BAD_MODEL', `tiankong: the model returned logits of shape [${logits?.dims.join(', ')}], ` +
        `expected [1, ${nMasks}, ${vocabSize}] (float32) for ${nMasks} mask(s)`);
    }
    return logits.data;
  };

  /** Joint-decoding settings for these options, or null without `joint: true`. */
  private jointFor(options: FillOptions): JointSettings | null {
    const { joint, beam } = options;
    if (joint !== undefined && typeof joint !== 'boolean') {
      throw new TiankongError('BAD_OPTION', `tiankong: joint must be true or false, got ${JSON.stringify(joint)}`);
    }
    if (!joint) {
      if (beam !== undefined) throw new TiankongError('BAD_OPTION', 'tiankong: beam only applies to joint decoding; pass joint: true with it');
      return null;
    }
    const width = beam ?? DEFAULT_BEAM;
    if (!Number.isInteger(width) || width < 1 || width > MAX_BEAM) {
      throw new TiankongError('BAD_OPTION', `tiankong: beam must be an integer from 1 to ${MAX_BEAM}, got ${beam}`);
    }
    return {
      beam: width, topK: options.topK ?? DEFAULT_TOP_K,
      decoding: this.decodingFor({ topK: width, filter: options.filter, memory: options.memory }),
    };
  }

  /** The decoder for these options (created once per distinct options, validated here). */
  private decodingFor(options: FillOptions): Decoding {
    if (typeof options !== 'object' || options === null) throw new TiankongError('BAD_OPTION', 'tiankong: options must be an object');
    const vocabSize = this.tokenizer.vocabSize();
    const topK = options.topK ?? DEFAULT_TOP_K;
    const threshold = options.threshold ?? 0;
    if (!Number.isInteger(topK) || topK < 1 || topK > vocabSize) {
      throw new TiankongError('BAD_OPTION', `tiankong: topK must be an integer from 1 to ${vocabSize} (the vocabulary size), got ${topK}`);
    }
    if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1)) {
      throw new TiankongError('BAD_OPTION', `tiankong: threshold must be a probability from 0 to 1, got ${threshold}`);
    }
    if (options.memory !== undefined && typeof options.memory !== 'boolean') {
      throw new TiankongError('BAD_OPTION', `tiankong: memory must be true or false, got ${JSON.stringify(options.memory)}`);
    }
    const memory = options.memory !== false ? this.memory : null;
    const fingerprint = `${topK}|${threshold}|${filterKey(options.filter)}|${memory ? 'memory' : 'model'}`;
    let decoding = this.decodings.get(fingerprint);
    if (decoding) {
      this.decodings.delete(fingerprint); // re-insert: most recently used last
    } else {
      const { allowIds, denyIds } = filterIds(options.filter, this.tokens());
      const decoder = new this.core.module.Decoder(this.tokenizer, {
        topK, threshold, excludeSpecial: true, excludeSubwords: true, allowIds, denyIds,
        ...(memory ? { memory, fusion: this.fusion } : {}),
      });
      decoding = { decoder, fingerprint };
      if (this.decodings.size >= MAX_DECODERS) {
        const [oldest, old] = this.decodings.entries().next().value!;
        old.decoder.delete();
        this.decodings.delete(oldest);
      }
    }
    this.decodings.set(fingerprint, decoding);
    return decoding;
  }

  /** The famous text / idiom behind a memory hit (read once per passage from the core). */
  private sourceOf(text: number, unit: number): CandidateSource | undefined {
    if (!this.memory) return undefined;
    const key = `${text}:${unit}`;
    let source = this.sources.get(key);
    if (!source) {
      source = this.memory.source(text, unit);
      if (this.sources.size > 4096) this.sources.clear();
      this.sources.set(key, source);
    }
    return source;
  }

  /** The vocabulary in id order, read once from the core. */
  private tokens(): string[] {
    if (this.vocab === null) {
      const size = this.tokenizer.vocabSize();
      this.vocab = Array.from({ length: size }, (_, id) => this.tokenizer.idToToken(id));
    }
    return this.vocab;
  }

  private throwIfDisposed(): void {
    if (this.disposed) throw new TiankongError('DISPOSED', disposedMessage());
  }

  private collectStats(): FillMaskStats {
    const { runtime, core, model } = this;
    const info = core.module.buildInfo();
    return {
      cache: this.cache.stats(),
      backend: runtime.backend,
      backendReason: runtime.backendReason,
      threads: runtime.threads,
      threadsReason: runtime.threadsReason,
      simd: info.simd,
      core: { build: core.variant, reason: core.reason, version: info.version },
      model: { name: model.manifest.name, vocabSize: model.manifest.architecture.vocab_size, maxLength: model.manifest.max_length, source: model.source },
      memory: this.memory ? memoryStats(this.memory) : null,
      runs: this.runs,
    };
  }
}

function disposedMessage(): string {
  return 'tiankong: this model was disposed; create a new one with createFillMask()';
}

/**
 * Loads the C++ core for an engine. Always the single-threaded build: the core's work
 * (tokenize, top-k) runs on one thread, so the pthread build would only add idle workers
 * (inference threads belong to ONNX Runtime). `baseUrl` overrides where its files are.
 */
export async function loadEngineCore(baseUrl?: string): Promise<LoadedCore> {
  try {
    const core = await loadCore({ variant: 'single', ...(baseUrl ? { baseUrl } : {}) });
    return { ...core, reason: 'tokenize and top-k run on one thread; ONNX Runtime owns the inference threads' };
  } catch (error) {
    throw new TiankongError('UNSUPPORTED', `tiankong: the WebAssembly core failed to load: ${describe(error)}`);
  }
}

/** Replaces lone surrogates with U+FFFD (same UTF-16 length, so offsets stay valid). */
export function toWellFormed(text: string): string {
  const native = (text as { toWellFormed?: () => string }).toWellFormed;
  if (native) return native.call(text);
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** createFillMask's `memory` option: true, false or absent. */
export function checkMemoryOption(memory: unknown): void {
  if (memory !== undefined && typeof memory !== 'boolean') {
    throw new TiankongError('BAD_OPTION', `tiankong: memory must be true or false, got ${JSON.stringify(memory)}`);
  }
}

function memoryStats(memory: WasmMemory): NonNullable<FillMaskStats['memory']> {
  const { bytes, ngrams, texts, idioms, maxOrder } = memory.info();
  return { bytes, ngrams, texts, idioms, maxOrder };
}

/**
 * model.json's fusion weights for the core (FusionWeights). Missing fields keep the core's
 * defaults; a wrong type or range is BAD_MODEL naming the field.
 */
function fusionOptions(manifest: ModelManifest, where: string): FusionOptions {
  const fusion = manifest.memory?.fusion;
  if (fusion === undefined) return {};
  const bad = (field: string, expected: string) =>
    new TiankongError('BAD_MODEL', `tiankong: ${where}: model.json memory.fusion.${field} must be ${expected}`);
  if (typeof fusion !== 'object' || fusion === null) throw bad('', 'an object');
  const out: FusionOptions = {};
  const numbers: [keyof typeof fusion, keyof FusionOptions, number, number][] = [
    ['model', 'model', 0, 100], ['unigram', 'unigram', -100, 100], ['hit_base', 'hitBase', -100, 100],
    ['hit_per_token', 'hitPerToken', -100, 100], ['hit_whole', 'hitWhole', -100, 100],
  ];
  for (const [field, name, min, max] of numbers) {
    const value = fusion[field];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !(value >= min && value <= max)) throw bad(field, `a number from ${min} to ${max}`);
    (out as Record<string, number>)[name] = value;
  }
  for (const [field, name, min, max] of [['min_hit_strength', 'minHitStrength', 1, 64], ['model_candidates', 'modelCandidates', 0, 4096]] as const) {
    const value = fusion[field];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) throw bad(field, `an integer from ${min} to ${max}`);
    out[name] = value as number;
  }
  if (fusion.ngram !== undefined) {
    if (!Array.isArray(fusion.ngram) || fusion.ngram.length !== 9 || !fusion.ngram.every((v) => typeof v === 'number' && Number.isFinite(v))) {
      throw bad('ngram', 'a list of 9 finite numbers (weights by n-gram length 0..8)');
    }
    out.ngram = Float32Array.from(fusion.ngram);
  }
  return out;
}

/** The decoder's top-k; logits it refuses (NaN, +Infinity) come from a broken model, so BAD_MODEL. */
function decodeLogits(decoder: WasmDecoder, logits: Float32Array, rows: number, vocabSize: number,
  ids: Int32Array, maskPositions: Int32Array): DecodedRow[] {
  try {
    return decoder.decode(logits, rows, vocabSize, ids, maskPositions);
  } catch (error) {
    throw new TiankongError('BAD_MODEL', `tiankong: the model returned unusable logits (${describe(error)}); ` +
      'the model file is broken — re-export it');
  }
}

function checkVocabulary(tokenizer: WasmTokenizer, model: LoadedModel): void {
  const { manifest } = model;
  const expected = manifest.architecture.vocab_size;
  if (tokenizer.vocabSize() !== expected) {
    throw new TiankongError('BAD_MODEL', `tiankong: ${model.source}: ${manifest.tokenizer.vocab} has ${tokenizer.vocabSize()} ` +
      `tokens but model.json says the model has ${expected}; the vocab and the model do not belong together`);
  }
  const actual = tokenizer.specialIds();
  for (const [name, id] of Object.entries(manifest.special_tokens)) {
    if (actual[name as keyof typeof actual] !== id) {
      throw new TiankongError('BAD_MODEL', `tiankong: ${model.source}: model.json says special token ${name} has id ${id} ` +
        `but ${manifest.tokenizer.vocab} puts it at ${actual[name as keyof typeof actual]}`);
    }
  }
}

function checkGraph(session: OrtSession, model: LoadedModel): void {
  const declared = [...model.manifest.inputs].sort().join(', ');
  const actual = [...session.inputNames].sort().join(', ');
  if (declared !== actual) {
    throw new TiankongError('BAD_MODEL', `tiankong: ${model.source}: model.onnx has inputs [${actual}] but model.json ` +
      `declares [${declared}]; re-export the model`);
  }
  const known = new Set(['input_ids', 'attention_mask', 'token_type_ids', 'mask_positions']);
  const unknown = session.inputNames.filter((name) => !known.has(name));
  if (unknown.length > 0 || !session.inputNames.includes('mask_positions') || !session.outputNames.includes('logits')) {
    throw new TiankongError('BAD_MODEL', `tiankong: ${model.source}: model.onnx must take input_ids, attention_mask, ` +
      `[token_type_ids,] mask_positions and return logits (the mask-only export); it has inputs [${actual}] and ` +
      `outputs [${session.outputNames.join(', ')}]`);
  }
}
