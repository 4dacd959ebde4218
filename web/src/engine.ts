/**
 * The fill-mask engine, shared by Node (in-process) and browsers (inside the Worker):
 * tokenize (C++ core) → result-cache lookup (C++ core) → one ONNX Runtime run for all the
 * masks of a text (input_ids, attention_mask, [token_type_ids], mask_positions; int64) →
 * top-k decode (C++ core) → cache put. One InferenceSession per model, runs serialized.
 */
import type { CoreModule, DecodedRow, WasmDecoder, WasmFingerprintCache, WasmTokenizer } from './core/core-module.js';
import { type LoadedCore, loadCore } from './core/load-core.js';
import { TiankongError, describe } from './errors.js';
import { filterIds, filterKey } from './filters.js';
import type { LoadedModel } from './model-source.js';
import { SerialQueue } from './run-queue.js';
import type { InferenceRuntime, OrtSession, OrtTensor } from './runtime.js';
import type { FillMask, FillMaskStats, FillOptions, FillResult } from './types.js';

export const DEFAULT_TOP_K = 5;
export const DEFAULT_CACHE = { maxEntries: 1000, maxBytes: 8 << 20 };
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
interface Prepared {
  text: string;
  ids: Int32Array;
  offsets: Uint32Array;
  maskPositions: Int32Array;
  decoding: Decoding;
  started: number;
  tokenizeMs: number;
}

/** A decoder for one set of decode options, with the fingerprint that keys its cached results. */
interface Decoding {
  decoder: WasmDecoder;
  fingerprint: string;
}

/** What the result cache stores per text: the decoded rows (token level, text independent). */
type CachedRows = { ids: number[]; p: number[]; other: number }[];

const now = (): number => performance.now();

export class FillMaskEngine {
  private readonly queue = new SerialQueue();
  private readonly decodings = new Map<string, Decoding>();
  private vocab: string[] | null = null;
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
    try {
      checkVocabulary(tokenizer, model);
      try {
        session = await runtime.ort.InferenceSession.create(model.modelBytes, runtime.sessionOptions);
      } catch (error) {
        throw new TiankongError('BAD_MODEL', `tiankong: ${model.source}: model.onnx cannot be loaded by ONNX Runtime ` +
          `(${runtime.backend}): ${describe(error)}`);
      }
      checkGraph(session, model);
      const cache = new module.FingerprintCache(cacheOptions.maxEntries, cacheOptions.maxBytes);
      const { modelBytes: _m, vocabBytes: _v, ...description } = model; // the session holds its own copy
      return new FillMaskEngine(core, runtime, description, tokenizer, session, cache);
    } catch (error) {
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
    this.cache.delete();
    this.tokenizer.delete();
    await this.session.release().catch(() => undefined);
    this.core.dispose();
  }

  private prepare(text: string, options: FillOptions): Prepared {
    const started = now();
    this.throwIfDisposed();
    if (typeof text !== 'string') {
      throw new TiankongError('BAD_OPTION', `tiankong: text must be a string, got ${text === null ? 'null' : typeof text}`);
    }
    const decoding = this.decodingFor(options);
    const wellFormed = toWellFormed(text);
    if (wellFormed.trim() === '') {
      throw new TiankongError('EMPTY_INPUT', 'tiankong: the text is empty; write a sentence with [MASK] where a character is missing');
    }
    const tokenizeStarted = now();
    const encoding = this.tokenizer.encode(wellFormed);
    const tokenizeMs = now() - tokenizeStarted;
    const maxLength = this.model.manifest.max_length;
    if (encoding.truncatedTokens > 0) {
      const tokens = encoding.ids.length - 2 + encoding.truncatedTokens;
      throw new TiankongError('TOO_LONG', `tiankong: the text is ${tokens} tokens long but the model reads at most ` +
        `${maxLength - 2} (plus [CLS] and [SEP]); shorten it to the sentence around the [MASK]`);
    }
    if (encoding.maskPositions.length === 0) {
      throw new TiankongError('NO_MASK', 'tiankong: the text has no [MASK]; write [MASK] (or ［MASK］) where a character should be filled in');
    }
    return {
      text: wellFormed, ids: encoding.ids, offsets: encoding.offsets, maskPositions: encoding.maskPositions,
      decoding, started, tokenizeMs,
    };
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
    const decodeStarted = now();
    const vocab = this.tokens();
    const masks: FillMask[] = rows.map((row, index) => {
      const start = item.offsets[2 * maskPositions[index]!]!;
      const end = item.offsets[2 * maskPositions[index]! + 1]!;
      const before = item.text.slice(0, start);
      const after = item.text.slice(end);
      const candidates = row.ids.map((id, k) => {
        const token = vocab[id]!;
        return { token, score: row.p[k]!, sequence: before + token + after };
      });
      return { index, start, end, candidates, other: row.other };
    });
    decodeMs += now() - decodeStarted;
    return {
      text: item.text, masks, other: masks.map((m) => m.other), cached: hit !== undefined,
      timings: { tokenizeMs: item.tokenizeMs, inferenceMs, decodeMs, totalMs: now() - item.started },
    };
  }

  /** One model run (inside the queue) + decode + cache put. The put happens even if the caller gave up. */
  private async infer(item: Prepared): Promise<{ rows: CachedRows; inferenceMs: number; decodeMs: number }> {
    const { ids, maskPositions } = item;
    const { ort } = this.runtime;
    const started = now();
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
    const inferenceMs = now() - started;
    const vocabSize = this.tokenizer.vocabSize();
    const nMasks = maskPositions.length;
    if (!logits || !(logits.data instanceof Float32Array) || logits.dims.join() !== `1,${nMasks},${vocabSize}`) {
      throw new TiankongError('BAD_MODEL', `tiankong: the model returned logits of shape [${logits?.dims.join(', ')}], ` +
        `expected [1, ${nMasks}, ${vocabSize}] (float32) for ${nMasks} mask(s)`);
    }
    const decodeStarted = now();
    const decoded: DecodedRow[] = item.decoding.decoder.decode(logits.data, nMasks, vocabSize);
    const rows: CachedRows = decoded.map((row) => ({ ids: Array.from(row.ids), p: Array.from(row.probabilities), other: row.other }));
    if (!this.disposed) this.cache.put(ids, maskPositions, item.decoding.fingerprint, JSON.stringify(rows));
    return { rows, inferenceMs, decodeMs: now() - decodeStarted };
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
    const fingerprint = `${topK}|${threshold}|${filterKey(options.filter)}`;
    let decoding = this.decodings.get(fingerprint);
    if (decoding) {
      this.decodings.delete(fingerprint); // re-insert: most recently used last
    } else {
      const { allowIds, denyIds } = filterIds(options.filter, this.tokens());
      const decoder = new this.core.module.Decoder(this.tokenizer, {
        topK, threshold, excludeSpecial: true, excludeSubwords: true, allowIds, denyIds,
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
