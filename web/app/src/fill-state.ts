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

/** A run of adjacent masks decoded as one word (structurally a FillResult's `words` entry). */
export interface WordSlots {
  maskIndices: readonly number[];
  candidates: ReadonlyArray<{ tokens: readonly string[] }>;
}

/**
 * What fills each blank: `choice[i]` indexes `masks[i].candidates`, or is -1 when mask i is filled
 * by its word's pick; `wordPicks[w]` indexes `words[w].candidates` (-1: no pick).
 */
export interface Choice {
  choice: number[];
  wordPicks: number[];
}

/**
 * The first fill of a result: adjacent masks take the best whole word (joint decoding), every
 * other mask its best candidate — so 我们明天去[MASK][MASK]玩 reads as one word, never as two
 * independent per-mask picks such as 的的.
 */
export function initialChoice(result: MaskSlots & { words?: readonly WordSlots[] }): Choice {
  const choice = result.masks.map(() => 0);
  const wordPicks = (result.words ?? []).map((word) => {
    if (word.candidates.length === 0) return -1;
    for (const index of word.maskIndices) choice[index] = -1;
    return 0;
  });
  return { choice, wordPicks };
}

/** The token a mask is filled with under `state`, or undefined (the mask keeps its text). */
export function chosenToken(
  result: MaskSlots & { words?: readonly WordSlots[] },
  state: Choice,
  maskIndex: number,
): string | undefined {
  const picked = state.choice[maskIndex] ?? 0;
  if (picked >= 0) return result.masks[maskIndex]?.candidates[picked]?.token;
  const words = result.words ?? [];
  const w = words.findIndex((word) => word.maskIndices.includes(maskIndex));
  const word = words[w];
  const candidate = word?.candidates[state.wordPicks[w] ?? -1];
  return candidate?.tokens[word!.maskIndices.indexOf(maskIndex)] ?? result.masks[maskIndex]?.candidates[0]?.token;
}

/** The filled sentence under `state` (per-mask picks and whole-word picks). */
export function fillChosen(result: MaskSlots & { words?: readonly WordSlots[] }, state: Choice): Filled {
  const masks = result.masks.map((mask, index) => {
    const token = chosenToken(result, state, index);
    return { ...mask, candidates: token === undefined ? [] : [{ token }] };
  });
  return fillSentence(
    { text: result.text, masks },
    masks.map(() => 0),
  );
}
