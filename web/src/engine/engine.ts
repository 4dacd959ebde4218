/**
 * The fill-mask engine, shared by Node (inside the Node entry's worker thread, node-worker.ts) and
 * browsers (inside the Worker): both reach it through browser/host.ts. A request
 * takes this path:
 *
 *   options (options.ts) → tokenize in the core (encode.ts) → result-cache lookup in the core
 *   (results.ts) → one ONNX Runtime run for all the masks of the text (session.ts) → top-k and
 *   memory fusion in the core (decoding.ts) → cache put → public result (results.ts)
 *
 * One InferenceSession per model; runs are serialized (run-queue.ts), which yields to the event
 * loop before each task and before each run of a multi-run task, so cancellation and disposal stop
 * work between model runs. Attribution (explain.ts, through `variantsOf`: its variants batched) and
 * joint decoding of adjacent masks (joint.ts, through `logitsOf`) drive the same session; explain
 * caches under its own fingerprint, joint words inside the rows' entry (results.ts: CachedFill), so
 * a fill is one cache lookup.
 * Equal requests in flight share one queued task (in-flight.ts).
 */
import type {
  FusionOptions,
  WasmConfusionSets,
  WasmDecoder,
  WasmFingerprintCache,
  WasmMemory,
  WasmTokenizer,
} from '../core/core-module.js';
import { toWellFormed } from '../core/text.js';
import { encodeText } from '../core/tokenizer.js';
import type { LoadedCore } from '../core/load-core.js';
import { TiankongError, throwIfAborted } from '../errors.js';
import { checkPositionTable } from '../model/onnx-graph.js';
import type { EarlyFiles, LoadedModel } from '../model/load.js';
import type {
  CheckOptions,
  CheckResult,
  ExplainOptions,
  ExplainResult,
  FillMaskStats,
  FillOptions,
  FillResult,
  ReadingsResult,
} from '../types.js';
import {
  MASK_ALL,
  type MaskingRule,
  type ScoredPosition,
  checkablePositions,
  decide,
  modelRule,
  publicKind,
  ruleFor,
  scoreOfGain,
  scorePositions,
} from './check.js';
import {
  type Decoding,
  Decoders,
  MEMORY_ALONE_FUSION,
  MemorySources,
  decodeLogits,
  fusionOptions,
  loadMemory,
  memoryStats,
} from './decoding.js';
import { type Encoded, encodeMasked, modelTokenizer, throwIfTooLong } from './encode.js';
import { type MaskedLogits, type Occlusion, type VariantLogits, occlude, topScores } from './explain.js';
import { InFlight } from './in-flight.js';
import { adjacentMaskRuns, decodeRunJointly } from './joint.js';
import { type BlankConstraint, Pinyin, allowedRows, charReadings, constraintsKey, inIdiomFirst } from './pinyin.js';
import {
  type CreateSettings,
  type FillSettings,
  checkCandidateToken,
  checkCheckOptions,
  checkExplainOptions,
  checkFillOptions,
  checkMaskIndex,
  checkText,
  checkTexts,
} from './options.js';
import {
  type CachedFill,
  type CachedRows,
  type CachedWords,
  MAX_CACHED_WORDS,
  cachedRows,
  explainFingerprint,
  explainedTokens,
  jointFingerprint,
  masksOf,
  wordsOf,
} from './results.js';
import { SerialQueue } from './run-queue.js';
import { type InferenceRuntime, type LogitsSource, ModelSession, NoModelLogits } from './session.js';

/** How many tokens `explain` marks as the strongest support. */
const EXPLAIN_TOP = 3;
/** Candidates a correction lists. */
const CHECK_CANDIDATES = 5;
/** The check's scoring, cached per text (bump when check.ts scores differently). */
const CHECK_FINGERPRINT = 'check/2';

export interface EngineSetup {
  model: LoadedModel;
  core: LoadedCore;
  runtime: InferenceRuntime;
  /** The result cache's bounds, checked (options.ts: checkCreateOptions). */
  cache: CreateSettings['cache'];
}

/** What a preview engine (FillMaskEngine.preview) is built from: the files read first, before the model. */
export interface PreviewSetup {
  early: EarlyFiles;
  /** The core, shared with the engine that follows: the preview never disposes it. */
  core: LoadedCore;
  runtime: InferenceRuntime;
  cache: CreateSettings['cache'];
}

/** A fill request after its options are checked, its decoders chosen and its text tokenized. */
interface Prepared extends Encoded {
  /** The decoder, its fingerprint naming the masks' sound constraints too. */
  decoding: Decoding;
  /** Per mask, its sound constraint or null. */
  constraints: (BlankConstraint | null)[];
  joint: { beam: number; topK: number; threshold: number; decoding: Decoding } | null;
}

const now = (): number => performance.now();
/** The longest text readings takes (its result holds a few objects per character). */
const MAX_READINGS_TEXT = 100_000;
const disposedMessage = 'tiankong: this model was disposed; create a new one with createFillMask()';
/** What keys a shared computation (in-flight.ts): the result cache's key. */
const flightKey = (ids: Int32Array, positions: Int32Array, fingerprint: string): string =>
  `${fingerprint}\n${ids.join(',')}\n${positions.join(',')}`;

/**
 * One model ready to fill: owns its tokenizer, decoders, memory, result cache and inference
 * session, and frees them on dispose(). Build it with FillMaskEngine.create.
 */
export class FillMaskEngine {
  private readonly queue = new SerialQueue();
  /** Equal requests in flight share one computation (in-flight.ts). */
  private readonly inFlight = new InFlight();
  private readonly decoders: Decoders;
  private readonly sources: MemorySources;
  private readonly pinyin: Pinyin;
  private vocab: string[] | null = null;
  /** The spelling check's confusion sets and decoders (memory / model alone), built on first use. */
  private confusions: WasmConfusionSets | null = null;
  private readonly checkDecoders = new Map<boolean, WasmDecoder>();
  private disposed = false;
  private disposing: Promise<void> | null = null;
  private runs = 0;
  private lastStats: FillMaskStats;

  private constructor(
    private readonly core: LoadedCore,
    private readonly runtime: InferenceRuntime,
    private readonly model: Pick<LoadedModel, 'manifest' | 'source'>,
    private readonly tokenizer: WasmTokenizer,
    private readonly session: LogitsSource,
    private readonly cache: WasmFingerprintCache,
    private readonly memory: WasmMemory | null,
    private readonly fusion: FusionOptions,
    /** Answers from the memory alone (no model yet): every result says `preview: true`. */
    private readonly preview = false,
  ) {
    this.decoders = new Decoders(core.module, tokenizer, () => this.tokens(), memory, fusion);
    this.sources = new MemorySources(memory);
    this.pinyin = new Pinyin(core.module, tokenizer);
    this.lastStats = this.collectStats();
  }

  /**
   * Builds the tokenizer, the inference session, the memory and the cache, checking the model
   * against its manifest on the way. Throws BAD_MODEL; frees what it built when it fails.
   */
  static async create(setup: EngineSetup): Promise<FillMaskEngine> {
    const { model, core, runtime } = setup;
    const { module } = core;
    const tokenizer = modelTokenizer(module, model);
    let session: ModelSession | undefined;
    let memory: WasmMemory | null = null;
    try {
      checkPositionTable(model.modelBytes, model.manifest, model.source);
      session = await ModelSession.create(runtime, model, module);
      const fusion = fusionOptions(model.manifest, model.source);
      if (model.memoryBytes) {
        memory = loadMemory(
          module,
          model.memoryBytes,
          tokenizer,
          model.manifest,
          model.source,
          model.memoryNgramsBytes,
        );
      }
      const cache = new module.FingerprintCache(setup.cache.maxEntries, setup.cache.maxBytes);
      const description = { manifest: model.manifest, source: model.source }; // the core holds its own copies
      return new FillMaskEngine(core, runtime, description, tokenizer, session, cache, memory, fusion);
    } catch (error) {
      memory?.delete();
      tokenizer.delete();
      await session?.release().catch(() => undefined);
      throw error;
    }
  }

  /**
   * An engine that fills from a split memory's first part alone while the model loads
   * (CreateFillMaskOptions.onPreview): zero logits (NoModelLogits) decoded with MEMORY_ALONE_FUSION,
   * results marked `preview: true`. Only `fill` and `fillBatch` are meant for it. Throws BAD_MODEL
   * as create does; its dispose leaves the shared core running.
   */
  static preview(setup: PreviewSetup): FillMaskEngine {
    const { early, core, runtime } = setup;
    const { module } = core;
    const tokenizer = modelTokenizer(module, early);
    let memory: WasmMemory | null = null;
    try {
      memory = loadMemory(module, early.memoryBytes, tokenizer, early.manifest, early.source);
      const cache = new module.FingerprintCache(setup.cache.maxEntries, setup.cache.maxBytes);
      return new FillMaskEngine(
        { ...core, dispose: () => undefined },
        runtime,
        { manifest: early.manifest, source: early.source },
        tokenizer,
        new NoModelLogits(tokenizer.vocabSize()),
        cache,
        memory,
        MEMORY_ALONE_FUSION,
        true,
      );
    } catch (error) {
      memory?.delete();
      tokenizer.delete();
      throw error;
    }
  }

  /**
   * LoadModelOptions.onMemoryFirst for an entry that wants a preview: builds one from the early
   * files once `core` has loaded and hands it to `onPreview`. Never rejects: when the preview
   * cannot be built, the engine reports what is wrong with the files (or the core) as it loads them.
   */
  static previewHook(
    core: Promise<LoadedCore>,
    setup: Omit<PreviewSetup, 'early' | 'core'>,
    onPreview: (preview: FillMaskEngine) => void,
  ): (early: EarlyFiles) => Promise<void> {
    return async (early) => {
      try {
        onPreview(FillMaskEngine.preview({ ...setup, early, core: await core }));
      } catch {
        // no preview
      }
    };
  }

  /** See FillMaskModel.fill. */
  async fill(text: string, options: FillOptions = {}): Promise<FillResult> {
    const prepared = this.prepare(text, options);
    throwIfAborted(options.signal); // also on a cache hit
    return this.complete(prepared, options.signal);
  }

  /**
   * See FillMaskModel.fillBatch: the options are checked first (BAD_OPTION without an index), then
   * every text (a failure carries the text's `index`), before anything runs. A hole in the array
   * is a text that is not a string.
   */
  async fillBatch(texts: string[], options: FillOptions = {}): Promise<FillResult[]> {
    this.throwIfDisposed();
    checkFillOptions(options, this.tokenizer.vocabSize());
    checkTexts(texts);
    const prepared: Prepared[] = [];
    for (let index = 0; index < texts.length; index++) {
      try {
        prepared.push(this.prepare(texts[index]!, options));
      } catch (error) {
        if (error instanceof TiankongError && error.code !== 'DISPOSED') {
          error.message = error.message.replace(/^(tiankong: )?/, `tiankong: texts[${index}]: `);
          error.index = index;
        }
        throw error;
      }
    }
    throwIfAborted(options.signal);
    const results: FillResult[] = [];
    for (const item of prepared) results.push(await this.complete(item, options.signal));
    return results;
  }

  /** See FillMaskModel.explain. */
  async explain(text: string, maskIndex: number, token: string, options: ExplainOptions = {}): Promise<ExplainResult> {
    const started = now();
    this.throwIfDisposed();
    checkExplainOptions(options);
    checkText(text);
    const { signal } = options;
    const item = encodeMasked(this.tokenizer, text, this.model.manifest.max_length, started);
    checkMaskIndex(maskIndex, item.maskPositions.length);
    checkCandidateToken(token);
    const candidateId = this.tokenizer.tokenToId(token);
    if (candidateId < 0) {
      throw new TiankongError(
        'BAD_OPTION',
        `tiankong: token ${JSON.stringify(token)} is not in the model's vocabulary; ` +
          'explain a candidate token that fill() returned',
      );
    }
    // The default decoder says what fill() can propose at all (no specials, [unusedN], ## pieces).
    if (!this.decoders.get(checkFillOptions({}, this.tokenizer.vocabSize()).decode).decoder.eligible(candidateId)) {
      throw new TiankongError(
        'BAD_OPTION',
        `tiankong: token ${JSON.stringify(token)} is a special token, an [unusedN] slot or a ## word piece, ` +
          'which fill() never proposes; explain a candidate token that fill() returned',
      );
    }
    const target = item.maskPositions[maskIndex]!;
    const positions = Int32Array.of(target);
    const fingerprint = explainFingerprint(candidateId);
    throwIfAborted(signal); // also on a cache hit
    const hit = this.cache.get(item.ids, positions, fingerprint);
    let occlusion: Occlusion;
    let inferenceMs = 0;
    let runs = 0;
    if (hit !== undefined) {
      occlusion = JSON.parse(hit) as Occlusion;
    } else {
      // One task of 1 + (tokens) variants, batched where the model allows (session.ts: variants);
      // it yields and checks the signal before each run (checkpoint).
      // Equal explains in flight share it.
      const key = flightKey(item.ids, positions, fingerprint);
      ({ occlusion, inferenceMs, runs } = await this.inFlight.join(
        key,
        (shared) =>
          this.queue.run(async (task) => {
            const runsBefore = this.runs;
            const inferenceStarted = now();
            const result = await occlude(
              this.variantsOf,
              item.ids,
              target,
              candidateId,
              this.tokenizer.specialIds().mask,
              this.tokenizer.vocabSize(),
              task.checkpoint,
              this.session.maxBatch,
            );
            if (!this.disposed) this.cache.put(item.ids, positions, fingerprint, JSON.stringify(result));
            return { occlusion: result, inferenceMs: now() - inferenceStarted, runs: this.runs - runsBefore };
          }, shared),
        signal,
      ));
    }
    return {
      text: item.text,
      maskIndex,
      token,
      method: 'occlusion',
      logProb: occlusion.logProb,
      tokens: explainedTokens(item, occlusion, this.tokens()),
      top: topScores(occlusion.scores, EXPLAIN_TOP),
      cached: hit !== undefined,
      timings: { tokenizeMs: item.tokenizeMs, inferenceMs, totalMs: now() - started, runs },
    };
  }

  /** See FillMaskModel.readings. */
  async readings(text: string): Promise<ReadingsResult> {
    this.throwIfDisposed();
    checkText(text);
    if (text.length > MAX_READINGS_TEXT) {
      throw new TiankongError(
        'TOO_LONG',
        `tiankong: readings takes at most ${MAX_READINGS_TEXT} UTF-16 units, the text has ${text.length}; ` +
          'ask for a line or a paragraph at a time',
      );
    }
    const wellFormed = toWellFormed(text);
    return { text: wellFormed, chars: charReadings(this.core.module, wellFormed) };
  }

  /** See FillMaskModel.check. */
  async check(text: string, options: CheckOptions = {}): Promise<CheckResult> {
    const started = now();
    this.throwIfDisposed();
    const settings = checkCheckOptions(options);
    checkText(text);
    const rule = modelRule(this.model.manifest.check);
    const {
      text: wellFormed,
      offsets,
      scored,
      cached,
      tokenizeMs,
      inferenceMs,
      runs,
    } = await this.checkScores(text, settings.memory, options.signal, rule);
    const decodeStarted = now();
    const spanOf = (position: number) => [offsets[2 * position]!, offsets[2 * position + 1]!] as const;
    const kept = keptSpans(wellFormed, settings.keep);
    const considered = scored.filter(({ position }) => {
      const [start, end] = spanOf(position);
      return !kept.some(([a, b]) => start < b && a < end);
    });
    const vocab = this.tokens();
    const corrections = decide(considered, ruleFor(settings.sensitivity, rule)).map(({ position, candidates }) => {
      const [start, end] = spanOf(position);
      const listed = candidates.slice(0, CHECK_CANDIDATES).map((c) => ({
        token: vocab[c.id]!,
        score: scoreOfGain(c.gain),
        pinyin: this.pinyin.readingsOf(vocab[c.id]!),
      }));
      return {
        start,
        end,
        original: wellFormed.slice(start, end),
        suggestion: listed[0]!.token,
        score: listed[0]!.score,
        kind: publicKind(candidates[0]!.kind),
        candidates: listed,
      };
    });
    let corrected = '';
    let at = 0;
    for (const c of corrections) {
      corrected += wellFormed.slice(at, c.start) + c.suggestion;
      at = c.end;
    }
    corrected += wellFormed.slice(at);
    const decodeMs = now() - decodeStarted;
    return {
      text: wellFormed,
      corrected,
      corrections,
      checked: scored.length,
      cached,
      timings: { tokenizeMs, inferenceMs, decodeMs, totalMs: now() - started, runs },
    };
  }

  /**
   * The spelling check's scoring of `text` (check.ts: scorePositions), before its rule: what check
   * decides from, cached per text and masking rule (MASK_ALL: every position scored masked). For
   * scripts/tune-check and the evaluation; not in the public API.
   */
  async checkScores(
    text: string,
    memory = true,
    signal?: AbortSignal,
    masking: MaskingRule = MASK_ALL,
  ): Promise<{
    text: string;
    offsets: Uint32Array;
    scored: ScoredPosition[];
    cached: boolean;
    tokenizeMs: number;
    inferenceMs: number;
    runs: number;
  }> {
    this.throwIfDisposed();
    const tokenizeStarted = now();
    const { text: wellFormed, encoding } = encodeText(this.tokenizer, text);
    const tokenizeMs = now() - tokenizeStarted;
    throwIfTooLong(encoding, this.model.manifest.max_length, 'check it a paragraph at a time');
    throwIfAborted(signal); // also on a cache hit
    const { ids, offsets } = encoding;
    const fused = memory && this.memory !== null;
    const fingerprint =
      `${CHECK_FINGERPRINT}|${fused ? 'memory' : 'model'}|` +
      `${masking.prefilter}|${masking.maskedShare}|${masking.maskedMin}`;
    const none = new Int32Array(0);
    const hit = ids.length > 2 ? this.cache.get(ids, none, fingerprint) : undefined;
    if (hit !== undefined || ids.length <= 2) {
      const scored = hit === undefined ? [] : (JSON.parse(hit) as ScoredPosition[]);
      return { text: wellFormed, offsets, scored, cached: hit !== undefined, tokenizeMs, inferenceMs: 0, runs: 0 };
    }
    // One task: every checkable position masked in its own copy, batched (session.ts: variants);
    // equal checks in flight share it.
    const { scored, inferenceMs, runs } = await this.inFlight.join(
      flightKey(ids, none, fingerprint),
      (shared) =>
        this.queue.run(async (task) => {
          const runsBefore = this.runs;
          const inferenceStarted = now();
          const checkable = checkablePositions(ids, this.tokens(), this.confusionSets());
          const result = await scorePositions(
            ids,
            checkable,
            this.tokenizer.specialIds().mask,
            this.tokenizer.vocabSize(),
            { logits: this.logitsOf, variants: this.variantsOf },
            this.checkDecoder(fused),
            { prefilter: masking.prefilter, maskedShare: masking.maskedShare, maskedMin: masking.maskedMin },
            task.checkpoint,
          );
          if (!this.disposed) this.cache.put(ids, none, fingerprint, JSON.stringify(result));
          return { scored: result, inferenceMs: now() - inferenceStarted, runs: this.runs - runsBefore };
        }, shared),
      signal,
    );
    return { text: wellFormed, offsets, scored, cached: false, tokenizeMs, inferenceMs, runs };
  }

  /** A snapshot of cache, backend, core and model information (the last one after dispose). */
  stats(): FillMaskStats {
    if (!this.disposed) this.lastStats = this.collectStats();
    return this.lastStats;
  }

  /**
   * Rejects queued requests with DISPOSED, stops a running explain or joint search before its next
   * model run (it rejects with DISPOSED), waits for the run in progress, frees everything. Idempotent.
   */
  dispose(): Promise<void> {
    this.disposing ??= this.release();
    return this.disposing;
  }

  private async release(): Promise<void> {
    this.lastStats = this.collectStats();
    this.disposed = true;
    await this.queue.close(disposedMessage);
    this.decoders.delete();
    for (const decoder of this.checkDecoders.values()) decoder.delete();
    this.confusions?.delete();
    this.memory?.delete(); // after the decoders that point to it
    this.cache.delete();
    this.tokenizer.delete();
    await this.session.release().catch(() => undefined);
    this.core.dispose();
  }

  /** Options first (BAD_OPTION before anything about the text), then the text. */
  private prepare(text: string, options: FillOptions): Prepared {
    const started = now();
    this.throwIfDisposed();
    const checked: FillSettings = checkFillOptions(options, this.tokenizer.vocabSize());
    // A preview has only the memory: always fused, no joint search.
    const settings: FillSettings = this.preview
      ? { ...checked, decode: { ...checked.decode, memory: true }, joint: null }
      : checked;
    const base = this.decoders.get(settings.decode);
    const jointBase = settings.joint && this.decoders.get(settings.joint.decode);
    checkText(text);
    const encoded = encodeMasked(this.tokenizer, text, this.model.manifest.max_length, started);
    const constraints = this.pinyin.forMasks(encoded.text, encoded, settings.constraints);
    // Constrained blanks decode differently: their results are cached under their own key.
    const key = constraintsKey(constraints);
    const decoding = { decoder: base.decoder, fingerprint: base.fingerprint + key };
    const joint = settings.joint &&
      jointBase && {
        beam: settings.joint.beam,
        topK: settings.joint.topK,
        threshold: settings.joint.threshold,
        decoding: { decoder: jointBase.decoder, fingerprint: jointBase.fingerprint + key },
      };
    return { ...encoded, decoding, joint, constraints };
  }

  private async complete(item: Prepared, signal?: AbortSignal): Promise<FillResult> {
    const { ids, maskPositions, decoding } = item;
    // The fill's one cache lookup: the rows, with the joint words cached under them (CachedFill).
    const hit = this.cache.get(ids, maskPositions, decoding.fingerprint);
    const entry = hit === undefined ? undefined : (JSON.parse(hit) as CachedFill);
    // Equal requests in flight (same ids, masks and cache fingerprint) share one queued task.
    const key = flightKey(ids, maskPositions, decoding.fingerprint);
    let rows: CachedRows;
    let inferenceMs = 0;
    let decodeMs = 0;
    if (entry !== undefined) {
      rows = entry.rows;
    } else {
      ({ rows, inferenceMs, decodeMs } = await this.inFlight.join(
        key,
        (shared) => this.queue.run(() => this.infer(item), shared),
        signal,
      ));
    }
    let cached = entry !== undefined;
    let words: CachedWords | undefined;
    if (item.joint) {
      const joint = item.joint;
      const fingerprint = jointFingerprint(joint.decoding.fingerprint);
      words = entry?.words?.[fingerprint];
      if (words === undefined) {
        const found = await this.inFlight.join(
          `${key}\n${fingerprint}`,
          (shared) => this.decodeWords(item, joint, { rows, words: entry?.words }, shared),
          signal,
        );
        words = found.words;
        inferenceMs += found.inferenceMs;
        cached = false;
      }
    }
    const decodeStarted = now();
    const vocab = this.tokens();
    const masks = masksOf(
      item,
      rows,
      vocab,
      (text, unit) => this.sources.get(text, unit),
      (token, index, hit) => {
        const constraint = item.constraints[index] ?? null;
        const readings = this.pinyin.readingsOf(token, constraint);
        // A constrained blank shows the readings meeting its constraint first, as asked.
        return hit && !constraint ? inIdiomFirst(readings, this.sources.readingAt(hit[0], hit[1])) : readings;
      },
    );
    item.constraints.forEach((constraint, index) => {
      if (constraint) masks[index]!.constraint = constraint.display;
    });
    const wordsResult =
      words && item.joint
        ? wordsOf(item.text, masks, words, item.joint.topK, item.joint.threshold, vocab, (tokens, maskIndices) =>
            this.pinyin.wordReadings(
              tokens,
              maskIndices.map((index) => item.constraints[index] ?? null),
            ),
          )
        : undefined;
    decodeMs += now() - decodeStarted;
    return {
      text: item.text,
      masks,
      other: masks.map((m) => m.other),
      ...(wordsResult ? { words: wordsResult } : {}),
      cached,
      ...(this.preview ? { preview: true as const } : {}),
      timings: { tokenizeMs: item.tokenizeMs, inferenceMs, decodeMs, totalMs: now() - item.started },
    };
  }

  /**
   * Joint decoding of every run of adjacent masks, in one queued task; the words join `entry` (the
   * rows' cache entry) under their joint fingerprint, with at most MAX_CACHED_WORDS decodings kept.
   */
  private decodeWords(
    item: Prepared,
    joint: NonNullable<Prepared['joint']>,
    entry: CachedFill,
    signal: AbortSignal,
  ): Promise<{ words: CachedWords; inferenceMs: number }> {
    const { ids, maskPositions } = item;
    const fingerprint = jointFingerprint(joint.decoding.fingerprint);
    return this.queue.run(async (task) => {
      const started = now();
      const vocabSize = this.tokenizer.vocabSize();
      // Each open row keeps its blank's sound constraint.
      const allowedAt = new Map(Array.from(maskPositions, (position, index) => [position, item.constraints[index]]));
      const constrained = item.constraints.some((c) => c !== null);
      const decode = (logits: Float32Array, rows: number, sequence: Int32Array, open: Int32Array) =>
        decodeLogits(
          joint.decoding.decoder,
          logits,
          rows,
          vocabSize,
          sequence,
          open,
          constrained ? Array.from(open, (position) => allowedAt.get(position)?.allowed ?? null) : undefined,
        );
      const words: CachedWords = [];
      for (const maskIndices of adjacentMaskRuns(maskPositions)) {
        const positions = maskIndices.map((index) => maskPositions[index]!);
        const fills = await decodeRunJointly(this.logitsOf, decode, ids, positions, joint.beam, task.checkpoint);
        words.push({ maskIndices, fills });
      }
      if (!this.disposed) {
        const kept = Object.entries(entry.words ?? {}).filter(([key]) => key !== fingerprint);
        const value: CachedFill = {
          rows: entry.rows,
          words: Object.fromEntries([...kept.slice(-(MAX_CACHED_WORDS - 1)), [fingerprint, words]]),
        };
        this.cache.put(ids, maskPositions, item.decoding.fingerprint, JSON.stringify(value));
      }
      return { words, inferenceMs: now() - started };
    }, signal);
  }

  /** One model run (inside the queue) + decode + cache put. The put happens even if the caller gave up. */
  private async infer(item: Prepared): Promise<{ rows: CachedRows; inferenceMs: number; decodeMs: number }> {
    const { ids, maskPositions } = item;
    const started = now();
    const logits = await this.logitsOf(ids, maskPositions);
    const inferenceMs = now() - started;
    const decodeStarted = now();
    const rows = cachedRows(
      decodeLogits(
        item.decoding.decoder,
        logits,
        maskPositions.length,
        this.tokenizer.vocabSize(),
        ids,
        maskPositions,
        allowedRows(item.constraints),
      ),
    );
    const entry: CachedFill = { rows };
    if (!this.disposed) this.cache.put(ids, maskPositions, item.decoding.fingerprint, JSON.stringify(entry));
    return { rows, inferenceMs, decodeMs: now() - decodeStarted };
  }

  /** One run of the mask-only graph on one sequence (call inside the queue): logits [positions, vocab]. */
  private readonly logitsOf: MaskedLogits = async (ids, maskPositions) => {
    const logits = await this.session.logits(ids, maskPositions);
    this.runs = this.session.runs;
    return logits;
  };

  /** Several same-length variants in batched runs where the model allows it (call inside the queue). */
  private readonly variantsOf: VariantLogits = async (batch, beforeRun) => {
    try {
      return await this.session.variants(batch, beforeRun);
    } finally {
      this.runs = this.session.runs; // also the runs before a cancellation
    }
  };

  private confusionSets(): WasmConfusionSets {
    this.confusions ??= new this.core.module.ConfusionSets(this.tokenizer);
    return this.confusions;
  }

  /**
   * The check's decoder: every admitted token comes back (top-k and the memory's model candidates
   * cover a position's whole candidate set), fused with the memory or not.
   */
  private checkDecoder(memory: boolean): WasmDecoder {
    let decoder = this.checkDecoders.get(memory);
    if (!decoder) {
      const all = Math.min(this.tokenizer.vocabSize(), 4096);
      decoder = new this.core.module.Decoder(this.tokenizer, {
        topK: all,
        threshold: 0,
        excludeSpecial: true,
        excludeSubwords: true,
        allowIds: new Int32Array(0),
        denyIds: new Int32Array(0),
        ...(memory && this.memory ? { memory: this.memory, fusion: { ...this.fusion, modelCandidates: all } } : {}),
      });
      this.checkDecoders.set(memory, decoder);
    }
    return decoder;
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
    if (this.disposed) throw new TiankongError('DISPOSED', disposedMessage);
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
      model: {
        name: model.manifest.name,
        vocabSize: model.manifest.architecture.vocab_size,
        maxLength: model.manifest.max_length,
        source: model.source,
      },
      memory: this.memory ? memoryStats(this.memory) : null,
      runs: this.runs,
    };
  }
}

/** UTF-16 spans of every occurrence of each keep-list entry in `text`. */
function keptSpans(text: string, keep: readonly string[]): [number, number][] {
  const spans: [number, number][] = [];
  for (const entry of keep) {
    for (let at = text.indexOf(entry); at >= 0; at = text.indexOf(entry, at + 1)) spans.push([at, at + entry.length]);
  }
  return spans;
}
