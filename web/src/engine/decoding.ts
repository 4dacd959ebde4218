/**
 * Decoding: logits → top-k candidates in the C++ core, fused with the corpus memory when it is
 * on. One core Decoder per distinct decode settings (kept in a small LRU), the memory's fusion
 * weights from model.json, and the sources (出处) of memory hits.
 */
import type {
  CoreModule,
  DecodedRow,
  FusionOptions,
  WasmDecoder,
  WasmMemory,
  WasmTokenizer,
} from '../core/core-module.js';
import { TiankongError, describe } from '../errors.js';
import type { CandidateSource, FillMaskStats, ModelManifest } from '../types.js';
import { filterIds } from './filters.js';
import type { DecodeSettings } from './options.js';

/** Decoders kept per engine (one per distinct topK/threshold/filter/memory). */
const MAX_DECODERS = 16;
/** Memory-hit sources kept before the memo starts over. */
const MAX_SOURCES = 4096;

/** A decoder for one set of decode settings, with the fingerprint that keys its cached results. */
export interface Decoding {
  decoder: WasmDecoder;
  fingerprint: string;
}

/** The decoders of one engine, created on first use per settings; `vocab()` is the tokens in id order. */
export class Decoders {
  private readonly decodings = new Map<string, Decoding>();

  constructor(
    private readonly module: CoreModule,
    private readonly tokenizer: WasmTokenizer,
    private readonly vocab: () => string[],
    private readonly memory: WasmMemory | null,
    private readonly fusion: FusionOptions,
  ) {}

  /**
   * The decoder for checked settings (the memory is fused when it is loaded and the settings
   * want it). Throws BAD_OPTION for filter tokens the vocabulary lacks, and for a filter that
   * leaves nothing to propose.
   */
  get(settings: DecodeSettings): Decoding {
    const memory = settings.memory ? this.memory : null;
    const fingerprint = `${settings.key}|${memory ? 'memory' : 'model'}`;
    let decoding = this.decodings.get(fingerprint);
    if (decoding) {
      this.decodings.delete(fingerprint); // re-insert: most recently used last
    } else {
      const { allowIds, denyIds } = filterIds(settings.filter, this.vocab());
      const decoder = new this.module.Decoder(this.tokenizer, {
        topK: settings.topK,
        threshold: settings.threshold,
        excludeSpecial: true,
        excludeSubwords: true,
        allowIds,
        denyIds,
        ...(memory ? { memory, fusion: this.fusion } : {}),
      });
      if (decoder.eligibleCount() === 0) {
        decoder.delete();
        throw new TiankongError(
          'BAD_OPTION',
          'tiankong: filter leaves no token a [MASK] can be filled with: filter.allow holds only special tokens ' +
            '([CLS], [MASK], …), [unusedN] slots or ## word pieces, or filter.deny removes every allowed token; ' +
            'allow characters or words of the vocabulary',
        );
      }
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

  /** Frees every decoder (before the memory they point to). */
  delete(): void {
    for (const { decoder } of this.decodings.values()) decoder.delete();
    this.decodings.clear();
  }
}

/**
 * The decoder's top-k (row r restricted to `allowed[r]` when given: a blank's sound constraint);
 * logits it refuses (NaN, +Infinity) come from a broken model, so BAD_MODEL.
 */
export function decodeLogits(
  decoder: WasmDecoder,
  logits: Float32Array,
  rows: number,
  vocabSize: number,
  ids: Int32Array,
  maskPositions: Int32Array,
  allowed?: (Uint8Array | null)[],
): DecodedRow[] {
  try {
    return decoder.decode(logits, rows, vocabSize, ids, maskPositions, allowed);
  } catch (error) {
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: the model returned unusable logits (${describe(error)}); ` + 'the model file is broken — re-export it',
    );
  }
}

/**
 * The fusion of a preview (engine.ts: FillMaskEngine.preview), which has no model: its logits are
 * zero and weigh nothing, and the memory ranks alone — unigram plus every n-gram gain at full
 * weight (stupid backoff), passage hits as the memory-alone baseline of scripts/evaluate-model
 * weighs them (model/tooling/fill-eval.mjs: MEMORY_ALONE_HITS), only the memory's own proposals scored.
 */
export const MEMORY_ALONE_FUSION: FusionOptions = Object.freeze({
  model: 0,
  unigram: 1,
  ngram: Float32Array.of(0, 0, 1, 1, 1, 1, 1, 1, 1),
  hitBase: 2,
  hitPerToken: 1,
  hitWhole: 2,
  minHitStrength: 3,
  modelCandidates: 0,
});

/**
 * The corpus memory of a model from its memory.bin (and a split memory's second part, `ngramBytes`),
 * checked by the core against the tokenizer's vocabulary. Throws BAD_MODEL saying how to rebuild
 * it or load the model without it.
 */
export function loadMemory(
  module: CoreModule,
  bytes: Uint8Array,
  tokenizer: WasmTokenizer,
  manifest: ModelManifest,
  where: string,
  ngramBytes?: Uint8Array,
): WasmMemory {
  try {
    return ngramBytes ? new module.Memory(bytes, tokenizer, ngramBytes) : new module.Memory(bytes, tokenizer);
  } catch (error) {
    const files = ngramBytes ? `${manifest.memory!.file} + ${manifest.memory!.ngrams}` : manifest.memory!.file;
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: ${where}: ${files}: ` +
        // The core's message may already say to rebuild it: said once, here, with the alternative.
        `${describe(error)
          .replace(/^Memory (\[[a-z-]+\]: )?/, '')
          .replace(/; rebuild it for this model with scripts\/build-memory$/, '')}; ` +
        'rebuild it for this model (scripts/build-memory) or load ' +
        'the model without it: createFillMask({ memory: false })',
    );
  }
}

/** The famous texts / idioms behind memory hits, read once per passage from the core. */
export class MemorySources {
  private readonly sources = new Map<string, { source: CandidateSource; reading: string }>();

  constructor(private readonly memory: WasmMemory | null) {}

  /** The source of hit (text, unit) of a decoded row, or undefined without a memory. */
  get(text: number, unit: number): CandidateSource | undefined {
    return this.read(text, unit)?.source;
  }

  /**
   * The reading the idiom dictionary gives the hit's character in its idiom ("là" in 丢三落四),
   * "" when the memory has none for it.
   */
  readingAt(text: number, unit: number): string {
    return this.read(text, unit)?.reading ?? '';
  }

  private read(text: number, unit: number): { source: CandidateSource; reading: string } | undefined {
    if (!this.memory) return undefined;
    const key = `${text}:${unit}`;
    let entry = this.sources.get(key);
    if (!entry) {
      const { pinyin, reading, ...rest } = this.memory.source(text, unit);
      entry = { source: pinyin ? { ...rest, pinyin } : rest, reading };
      if (this.sources.size > MAX_SOURCES) this.sources.clear();
      this.sources.set(key, entry);
    }
    return entry;
  }
}

/** stats().memory for a loaded memory. */
export function memoryStats(memory: WasmMemory): NonNullable<FillMaskStats['memory']> {
  const { bytes, ngrams, texts, idioms, maxOrder } = memory.info();
  return { bytes, ngrams, texts, idioms, maxOrder };
}

/**
 * model.json's fusion weights for the core (FusionWeights). Missing fields keep the core's
 * defaults; a wrong type or range is BAD_MODEL naming the field.
 */
export function fusionOptions(manifest: ModelManifest, where: string): FusionOptions {
  const fusion = manifest.memory?.fusion;
  if (fusion === undefined) return {};
  const bad = (field: string, expected: string) =>
    new TiankongError('BAD_MODEL', `tiankong: ${where}: model.json memory.fusion.${field} must be ${expected}`);
  if (typeof fusion !== 'object' || fusion === null) throw bad('', 'an object');
  const out: FusionOptions = {};
  const numbers: [keyof typeof fusion, keyof FusionOptions, number, number][] = [
    ['model', 'model', 0, 100],
    ['unigram', 'unigram', -100, 100],
    ['hit_base', 'hitBase', -100, 100],
    ['hit_per_token', 'hitPerToken', -100, 100],
    ['hit_whole', 'hitWhole', -100, 100],
    ['floor', 'floor', 0, 0.5],
  ];
  for (const [field, name, min, max] of numbers) {
    const value = fusion[field];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !(value >= min && value <= max))
      throw bad(field, `a number from ${min} to ${max}`);
    (out as Record<string, number>)[name] = value;
  }
  for (const [field, name, min, max] of [
    ['min_hit_strength', 'minHitStrength', 1, 64],
    ['model_candidates', 'modelCandidates', 0, 4096],
  ] as const) {
    const value = fusion[field];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max)
      throw bad(field, `an integer from ${min} to ${max}`);
    out[name] = value as number;
  }
  if (fusion.ngram !== undefined) {
    if (
      !Array.isArray(fusion.ngram) ||
      fusion.ngram.length !== 9 ||
      !fusion.ngram.every((v) => typeof v === 'number' && Number.isFinite(v))
    ) {
      throw bad('ngram', 'a list of 9 finite numbers (weights by n-gram length 0..8)');
    }
    out.ngram = Float32Array.from(fusion.ngram);
  }
  return out;
}
