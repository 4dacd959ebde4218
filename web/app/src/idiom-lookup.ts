/**
 * Finding the idiom a filled-in candidate completes: any four-character window of the filled
 * sentence that overlaps a filled token and is in the dictionary.
 */
import type { FilledSpan } from './fill-state.js';

/** The idiom asset written by web/app/tooling/idioms.mjs. */
export interface IdiomAsset {
  format: 'tiankong-idioms/1';
  count: number;
  /** idiom -> [pinyin, explanation] */
  idioms: Record<string, [string, string]>;
}

export interface IdiomMatch {
  idiom: string;
  pinyin: string;
  explanation: string;
  /** UTF-16 offset in the filled sentence. */
  start: number;
}

const IDIOM_LENGTH = 4;

/**
 * Idioms in `text` whose four characters include part of a filled span, in order of
 * position, each idiom once. Windows are four code units of non-surrogate characters
 * (the dictionary's idioms are all in the Basic Multilingual Plane).
 */
export function findCompletedIdioms(text: string, spans: readonly FilledSpan[], asset: IdiomAsset): IdiomMatch[] {
  const seen = new Set<string>();
  const matches: IdiomMatch[] = [];
  const starts = new Set<number>();
  for (const span of spans) {
    for (
      let start = Math.max(0, span.start - IDIOM_LENGTH + 1);
      start < span.end && start + IDIOM_LENGTH <= text.length;
      start++
    ) {
      starts.add(start);
    }
  }
  for (const start of [...starts].sort((a, b) => a - b)) {
    const window = text.slice(start, start + IDIOM_LENGTH);
    if (seen.has(window) || /[\uD800-\uDFFF]/.test(window)) continue;
    const entry = Object.hasOwn(asset.idioms, window) ? asset.idioms[window] : undefined;
    if (!entry) continue;
    seen.add(window);
    matches.push({ idiom: window, pinyin: entry[0], explanation: entry[1], start });
  }
  return matches;
}
