/**
 * The 纠错 mode's bookkeeping, free of the DOM: which flagged characters still stand after an
 * edit, and what accepting suggestions does to the text. The check of an edited text arrives
 * later (debounced, in the Worker); until then the flags the edit did not touch keep their
 * underline, moved with the text, so typing never makes them flicker.
 */
import type { CheckCorrection } from '../../src/types.js';

/** A flagged character as the page shows it. */
export type ShownCorrection = CheckCorrection;

/**
 * The corrections of `before` that still apply in `after`: those wholly inside the unchanged
 * start keep their offsets, those wholly inside the unchanged end move by the change in length,
 * the rest (touched by the edit) are dropped. The unchanged start and end never overlap, and
 * neither splits a surrogate pair.
 * @example
 * ```ts
 * carryOver('我门去', '好，我门去', corrections); // 门 moves from 1 to 3
 * ```
 */
export function carryOver(before: string, after: string, corrections: readonly ShownCorrection[]): ShownCorrection[] {
  if (before === after) return [...corrections];
  const shorter = Math.min(before.length, after.length);
  let prefix = 0;
  while (prefix < shorter && before.charCodeAt(prefix) === after.charCodeAt(prefix)) prefix++;
  if (prefix > 0 && isHighSurrogate(before.charCodeAt(prefix - 1))) prefix--;
  let suffix = 0;
  while (
    suffix < shorter - prefix &&
    before.charCodeAt(before.length - 1 - suffix) === after.charCodeAt(after.length - 1 - suffix)
  )
    suffix++;
  if (suffix > 0 && isLowSurrogate(before.charCodeAt(before.length - suffix))) suffix--;
  const shift = after.length - before.length;
  const tail = before.length - suffix;
  const out: ShownCorrection[] = [];
  for (const c of corrections) {
    if (c.end <= prefix) out.push(c);
    else if (c.start >= tail) out.push({ ...c, start: c.start + shift, end: c.end + shift });
  }
  return out;
}

/**
 * `text` with `chosen` put in place of each correction (same-length substitutions, so the other
 * offsets stay valid); corrections that no longer match their original character are skipped.
 */
export function applyCorrections(
  text: string,
  corrections: ReadonlyArray<Pick<ShownCorrection, 'start' | 'end' | 'original'> & { chosen: string }>,
): string {
  let out = text;
  for (const c of [...corrections].sort((a, b) => b.start - a.start)) {
    if (out.slice(c.start, c.end) !== c.original) continue;
    out = out.slice(0, c.start) + c.chosen + out.slice(c.end);
  }
  return out;
}

/** The index of the correction under the caret (`at`, a UTF-16 offset): before its character, else just after it; -1 for none. */
export function correctionAt(corrections: readonly ShownCorrection[], at: number): number {
  const before = corrections.findIndex((c) => c.start <= at && at < c.end);
  return before >= 0 ? before : corrections.findIndex((c) => c.end === at);
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
