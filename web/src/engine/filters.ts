/**
 * Candidate filters → token-id lists for the core's decoder (computed once per model and
 * filter; the decoder turns them into an eligibility mask once per decoder).
 */
import { TiankongError } from '../errors.js';
import type { CandidateFilter } from '../types.js';

export interface FilterIds {
  allowIds: Int32Array;
  denyIds: Int32Array;
}

const NONE = new Int32Array(0);
/** One CJK unified ideograph (basic block and extensions, incl. compatibility ideographs that are unified). */
const SINGLE_IDEOGRAPH = /^\p{Unified_Ideograph}$/u;
/** Only punctuation and symbols (the "##" of a continuation piece is removed first). */
const PUNCTUATION_OR_SYMBOL = /^[\p{P}\p{S}]+$/u;

/** Checks the shape of a `filter` option (options.ts); its tokens are looked up by filterIds. Throws BAD_OPTION. */
export function checkFilter(filter: unknown): CandidateFilter | undefined {
  if (filter === undefined || filter === 'chinese' || filter === 'no-punctuation') return filter;
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
    throw new TiankongError(
      'BAD_OPTION',
      `tiankong: filter must be 'chinese', 'no-punctuation' or { allow?: string[], deny?: string[] }, got ${JSON.stringify(filter)}`,
    );
  }
  for (const field of ['allow', 'deny'] as const) {
    const tokens = (filter as Record<string, unknown>)[field];
    if (tokens !== undefined && (!Array.isArray(tokens) || tokens.some((t) => typeof t !== 'string'))) {
      throw new TiankongError('BAD_OPTION', `tiankong: filter.${field} must be an array of token strings`);
    }
  }
  return filter as CandidateFilter;
}

/** A stable string naming a checked filter, for the result-cache fingerprint. */
export function filterKey(filter: CandidateFilter | undefined): string {
  if (filter === undefined) return '';
  if (typeof filter === 'string') return filter;
  return JSON.stringify({ allow: filter.allow ?? null, deny: filter.deny ?? null });
}

/**
 * Maps a checked filter to id lists over `vocab` (tokens in id order). Throws BAD_OPTION naming
 * tokens the vocabulary lacks, or when `allow` leaves nothing to propose.
 */
export function filterIds(filter: CandidateFilter | undefined, vocab: readonly string[]): FilterIds {
  if (filter === undefined) return { allowIds: NONE, denyIds: NONE };
  if (filter === 'chinese') return { allowIds: idsWhere(vocab, (t) => SINGLE_IDEOGRAPH.test(t)), denyIds: NONE };
  if (filter === 'no-punctuation') {
    return {
      allowIds: NONE,
      denyIds: idsWhere(vocab, (t) => PUNCTUATION_OR_SYMBOL.test(t.startsWith('##') ? t.slice(2) : t)),
    };
  }
  const allow = filter.allow === undefined ? NONE : lookUp(filter.allow, vocab, 'allow');
  if (filter.allow !== undefined && allow.length === 0) {
    throw new TiankongError(
      'BAD_OPTION',
      'tiankong: filter.allow is empty, so no candidate could be proposed; omit it to allow every token',
    );
  }
  return { allowIds: allow, denyIds: filter.deny === undefined ? NONE : lookUp(filter.deny, vocab, 'deny') };
}

function idsWhere(vocab: readonly string[], keep: (token: string) => boolean): Int32Array {
  const ids: number[] = [];
  vocab.forEach((token, id) => keep(token) && ids.push(id));
  return Int32Array.from(ids);
}

function lookUp(tokens: readonly string[], vocab: readonly string[], field: 'allow' | 'deny'): Int32Array {
  const index = new Map(vocab.map((token, id) => [token, id]));
  const missing = tokens.filter((t) => !index.has(t));
  if (missing.length > 0) {
    throw new TiankongError(
      'BAD_OPTION',
      `tiankong: filter.${field} has ${missing.length} token(s) not in the model's ` +
        `vocabulary: ${missing
          .slice(0, 5)
          .map((t) => JSON.stringify(t))
          .join(', ')}${missing.length > 5 ? ', …' : ''}`,
    );
  }
  return Int32Array.from(tokens, (t) => index.get(t)!);
}
