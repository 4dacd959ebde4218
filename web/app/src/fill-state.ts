/**
 * The filled-in sentence: the input text with each mask replaced by the candidate the user
 * picked (the best one until they pick another). Pure functions over a fill result.
 */

/** The parts of a fill result this module needs (structurally a FillResult). */
export interface MaskSlots {
  text: string;
  masks: ReadonlyArray<{ start: number; end: number; candidates: ReadonlyArray<{ token: string }> }>;
}

/** One run of the filled sentence: original text, or a token that replaced mask `maskIndex`. */
export interface FilledPart {
  text: string;
  maskIndex?: number;
}

/** Where a filled token ended up in the filled sentence (UTF-16, half-open). */
export interface FilledSpan {
  maskIndex: number;
  start: number;
  end: number;
}

export interface Filled {
  text: string;
  parts: FilledPart[];
  spans: FilledSpan[];
}

/**
 * Replaces every mask of `result.text` by its chosen candidate (`choice[i]` indexes
 * `masks[i].candidates`; missing = 0). A mask without candidates keeps its original text.
 */
export function fillSentence(result: MaskSlots, choice: readonly number[] = []): Filled {
  const parts: FilledPart[] = [];
  const spans: FilledSpan[] = [];
  let text = '';
  let last = 0;
  result.masks.forEach((mask, maskIndex) => {
    const before = result.text.slice(last, mask.start);
    if (before) parts.push({ text: before });
    text += before;
    const token = mask.candidates[choice[maskIndex] ?? 0]?.token;
    if (token === undefined) {
      const original = result.text.slice(mask.start, mask.end);
      parts.push({ text: original });
      text += original;
    } else {
      parts.push({ text: token, maskIndex });
      spans.push({ maskIndex, start: text.length, end: text.length + token.length });
      text += token;
    }
    last = mask.end;
  });
  const rest = result.text.slice(last);
  if (rest) parts.push({ text: rest });
  return { text: text + rest, parts, spans };
}
