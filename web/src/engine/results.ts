/**
 * Results: what the engine keeps in the core's result cache (token-level rows, text independent,
 * so an equal token sequence with other offsets hits), the cache fingerprints of explain and joint
 * results, and the shaping of cached rows into the public results for one text.
 */
import type { DecodedRow } from '../core/core-module.js';
import type { CandidateSource, ExplainResult, FillMask, FillWord } from '../types.js';
import type { Encoded } from './encode.js';
import type { Occlusion } from './explain.js';
import type { JointFill } from './joint.js';

/**
 * What the result cache stores per text for fill: the decoded rows; `src[k]` is candidate k's
 * memory hit as [text, unit] (null: none), present when any candidate has one.
 */
export type CachedRows = { ids: number[]; p: number[]; other: number; src?: ([number, number] | null)[] }[];
/** Cached joint decoding: the final beam of each run of adjacent masks. */
export type CachedWords = { maskIndices: number[]; fills: JointFill[] }[];
/**
 * One result-cache entry of fill, keyed by the rows' decoder: the rows, and the joint words of the
 * joint decoders used with them (by jointFingerprint), so that every fill, joint or not, is one
 * cache lookup.
 */
export interface CachedFill {
  rows: CachedRows;
  words?: Record<string, CachedWords>;
}
/** Joint decodings kept per cache entry (the most recent ones). */
export const MAX_CACHED_WORDS = 4;

/** Result-cache fingerprint of an explanation of candidate `candidateId`. */
export const explainFingerprint = (candidateId: number): string => `explain|${candidateId}`;
/** Result-cache fingerprint of joint decoding with the decoder of `decodingFingerprint`. */
export const jointFingerprint = (decodingFingerprint: string): string => `joint|${decodingFingerprint}`;

/** The core's decoded rows in their cached form. */
export function cachedRows(decoded: readonly DecodedRow[]): CachedRows {
  return decoded.map((row) => ({
    ids: Array.from(row.ids),
    p: Array.from(row.probabilities),
    other: row.other,
    ...(row.hitText && Array.from(row.hitText).some((t) => t >= 0)
      ? { src: Array.from(row.hitText, (t, k): [number, number] | null => (t >= 0 ? [t, row.hitUnit![k]!] : null)) }
      : {}),
  }));
}

/** Cached rows → the masks of `item` (offsets and sequences follow its text). */
export function masksOf(
  item: Encoded,
  rows: CachedRows,
  vocab: readonly string[],
  sourceOf: (text: number, unit: number) => CandidateSource | undefined,
  pinyinOf: (token: string, maskIndex: number, hit: readonly [number, number] | undefined) => string[],
): FillMask[] {
  return rows.map((row, index) => {
    const start = item.offsets[2 * item.maskPositions[index]!]!;
    const end = item.offsets[2 * item.maskPositions[index]! + 1]!;
    const before = item.text.slice(0, start);
    const after = item.text.slice(end);
    const candidates = row.ids.map((id, k) => {
      const token = vocab[id]!;
      const hit = row.src?.[k];
      const source = hit ? sourceOf(hit[0], hit[1]) : undefined;
      return {
        token,
        score: row.p[k]!,
        sequence: before + token + after,
        ...(source ? { source } : {}),
        pinyin: pinyinOf(token, index, hit ?? undefined),
      };
    });
    return { index, start, end, candidates, other: row.other };
  });
}

/**
 * Cached token-level words → the public form for this text (offsets and sequences follow `text`):
 * the best `topK` words whose joint score is at least `threshold` (as fill's mask lists). A
 * word's reading takes, per character, the reading of the same candidate of its mask where that
 * candidate's idiom (with the dictionary's reading) is in the word's sequence; otherwise
 * `pinyinOf`'s.
 */
export function wordsOf(
  text: string,
  masks: readonly FillMask[],
  words: CachedWords,
  topK: number,
  threshold: number,
  vocab: readonly string[],
  pinyinOf: (tokens: readonly string[], maskIndices: readonly number[]) => string[],
): FillWord[] {
  return words.map(({ maskIndices, fills }) => {
    const start = masks[maskIndices[0]!]!.start;
    const end = masks[maskIndices[maskIndices.length - 1]!]!.end;
    const candidates = fills
      .filter(({ score }) => score >= threshold)
      .slice(0, topK)
      .map(({ ids, score }) => {
        const tokens = ids.map((id) => vocab[id]!);
        const word = tokens.join('');
        const sequence = text.slice(0, start) + word + text.slice(end);
        const pinyin = pinyinOf(tokens, maskIndices).map((reading, k) => {
          const same = masks[maskIndices[k]!]!.candidates.find((c) => c.token === tokens[k]);
          return same?.source?.pinyin && sequence.includes(same.source.text) ? same.pinyin[0]! : reading;
        });
        return { text: word, tokens, score, sequence, pinyin };
      });
    return { start, end, maskIndices, candidates };
  });
}

/** The explained tokens of `item` (without [CLS] and [SEP]) with their occlusion scores. */
export function explainedTokens(
  item: Encoded,
  occlusion: Occlusion,
  vocab: readonly string[],
): ExplainResult['tokens'] {
  return occlusion.scores.map((score, k) => ({
    token: vocab[item.ids[k + 1]!]!,
    start: item.offsets[2 * (k + 1)]!,
    end: item.offsets[2 * (k + 1) + 1]!,
    score,
  }));
}
