// Benchmark inputs cut from the shared corpus: sentences of exactly N characters, each a
// CJK ideograph or CJK punctuation (so every character is one token and the model sees
// N + 2 tokens with [CLS]/[SEP]), with 1 or 3 ideographs replaced by [MASK].
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const IDEOGRAPH = /\p{Script=Han}/u;
const CJK_PUNCTUATION = new Set('，。、；：？！“”‘’《》（）「」—…·');
const isSentenceChar = (c) => IDEOGRAPH.test(c) || CJK_PUNCTUATION.has(c);

/**
 * Windows of `chars` consecutive sentence characters from `text`, non-overlapping, in order.
 * A window starts after punctuation (or at a line start) so it reads like a sentence start.
 */
function* windows(text, chars) {
  for (const line of text.split('\n')) {
    const cs = Array.from(line);
    let i = 0;
    while (i + chars <= cs.length) {
      const slice = cs.slice(i, i + chars);
      const bad = slice.findLastIndex((c) => !isSentenceChar(c));
      if (bad >= 0) {
        i += bad + 1;
        continue;
      }
      if (!IDEOGRAPH.test(slice[0])) {
        i += 1;
        continue;
      }
      yield slice;
      i += chars;
    }
  }
}

/** Replaces `masks` ideographs, spread evenly over the window, by [MASK]. */
function masked(slice, masks) {
  const out = [...slice];
  for (let k = 1; k <= masks; k++) {
    let p = Math.floor((k * slice.length) / (masks + 1));
    while (!IDEOGRAPH.test(out[p])) p = (p + 1) % slice.length; // an ideograph, not punctuation or a mask
    out[p] = '[MASK]';
  }
  return out.join('');
}

/**
 * `count` distinct masked sentences per (length, mask count), deterministic: every
 * `stride`-th window of the corpus file, different windows for each mask count.
 * @returns {Map<string, string[]>} key `${chars}x${masks}`
 */
export function benchSentences({ corpusDir, file = 'wiki.txt', lengths, maskCounts, count }) {
  const text = readFileSync(join(corpusDir, file), 'utf8');
  const result = new Map();
  for (const chars of lengths) {
    const all = [...windows(text, chars)];
    const needed = count * maskCounts.length;
    if (all.length < needed) {
      throw new Error(`${file} has only ${all.length} windows of ${chars} CJK characters; ${needed} needed`);
    }
    const stride = Math.floor(all.length / needed);
    maskCounts.forEach((masks, m) => {
      const picked = Array.from({ length: count }, (_, i) => all[(i * maskCounts.length + m) * stride]);
      result.set(
        `${chars}x${masks}`,
        picked.map((slice) => masked(slice, masks)),
      );
    });
  }
  return result;
}
