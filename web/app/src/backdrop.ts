/**
 * The editor's backdrop (editor.ts): the text again, transparent, laid out like the textarea in
 * front of it, with masks and suspicious characters highlighted. An edit costs work around the
 * edit only, however long the text and however many marks it holds:
 *
 * - the text is a row of pieces, spans of at most PIECE_UNITS characters, cut after a newline
 *   where there is one and never inside a mark, a surrogate pair or a combining sequence. An
 *   edit re-renders the pieces within EDIT_MARGIN of it (one or two), never a whole text run;
 * - the pieces sit in blocks of a few thousand characters, cut only after a newline (wrapping
 *   restarts there, so a block wraps exactly as the same lines do in the textarea). An edit lays
 *   out its own block again and the browser keeps the layout of all others; only a paragraph
 *   longer than a block is laid out whole, as the textarea lays it out too;
 * - a run of adjacent suspicious characters is one highlight, however long (no element per
 *   character);
 * - what the warnings need (how many suspicious characters, the first ones and their positions
 *   in code points) is kept per piece, so no edit scans the whole text for marks again.
 *
 * Past `maxHighlighted` suspicious characters only the masks are drawn (tens of thousands of
 * highlights in one paragraph would still be laid out again on every keystroke in it).
 * All text goes into the DOM as text nodes, never as HTML.
 */
import { findMarks, type Mark, splitsPair } from './text-marks.js';

/** The longest piece, in UTF-16 units (what one keystroke re-renders at most, twice or so). */
export const PIECE_UNITS = 512;

/**
 * Longer than any mark (text-marks.ts: "[MASK]" is six units, a mask with a sound constraint
 * such as "[MASK:shang4]" at most 6 + 1 + 16 code points, 39 units) or character (a surrogate
 * pair): marks this far from an edit cannot change. No mark holds a newline, so the margin stops
 * at one.
 */
const EDIT_MARGIN = 48;

/** A block is cut (after a newline) once it holds more than BLOCK_MAX units, into blocks of about BLOCK_UNITS. */
const BLOCK_UNITS = 2048;
const BLOCK_MAX = 2 * BLOCK_UNITS;

const COMBINING = /\p{M}/u;
/** True when unit `at` of `text` belongs with the one before: a combining mark, a joiner, a variation selector. */
function clingsToPrevious(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return c === 0x200c || c === 0x200d || (c >= 0xfe00 && c <= 0xfe0f) || COMBINING.test(text[at]!);
}

interface Piece {
  /** Offset of its first unit in the text. */
  start: number;
  text: string;
  /** Its marks, offsets relative to the piece. */
  marks: Mark[];
  suspicious: number;
  codePoints: number;
  el: HTMLSpanElement;
  /** The block it sits in. */
  block: HTMLElement;
}

/** Code points in text[from, to) (`from` not inside a pair). */
function codePointsIn(text: string, from: number, to: number): number {
  let n = to - from;
  for (let i = from + 1; i < to; i++) if (splitsPair(text, i)) n--;
  return n;
}

/**
 * `text` cut into pieces of at most PIECE_UNITS units and about equal length (one character more
 * never leaves a piece of one): after the last newline in the second half of a piece's room if
 * there is one, else where no mark, pair or combining sequence is split. Offsets of pieces are
 * relative to `text`, those of their marks relative to the piece.
 */
function cutPieces(text: string): Array<{ start: number; text: string; marks: Mark[] }> {
  const marks = findMarks(text);
  const pieces: Array<{ start: number; text: string; marks: Mark[] }> = [];
  let next = 0; // the first mark not yet in a piece
  const insideMark = (cut: number) => {
    for (let k = next; k < marks.length && marks[k]!.start < cut; k++) if (marks[k]!.end > cut) return true;
    return false;
  };
  const ok = (cut: number, strict: boolean) =>
    !splitsPair(text, cut) &&
    !insideMark(cut) &&
    (!strict || (!clingsToPrevious(text, cut) && text.charCodeAt(cut - 1) !== 0x200d));
  let pos = 0;
  while (pos < text.length) {
    let end = text.length;
    if (end - pos > PIECE_UNITS) {
      const target = Math.ceil((end - pos) / Math.ceil((end - pos) / PIECE_UNITS));
      const newline = text.lastIndexOf('\n', pos + target - 1);
      if (newline >= pos + target / 2) end = newline + 1;
      else {
        let cut = pos + target;
        while (cut > pos + target / 2 && !ok(cut, true)) cut--;
        if (!ok(cut, true)) for (cut = pos + target; cut > pos + 1 && !ok(cut, false); cut--);
        end = cut;
      }
    }
    const own: Mark[] = [];
    while (next < marks.length && marks[next]!.start < end) {
      const mark = marks[next++]!;
      own.push({ ...mark, start: mark.start - pos, end: mark.end - pos });
    }
    pieces.push({ start: pos, text: text.slice(pos, end), marks: own });
    pos = end;
  }
  return pieces;
}

/**
 * Appends text[from, to) to `parent` with its marks (sorted, within the range) highlighted: masks,
 * and if `highlightAll` runs of suspicious characters, one highlight per run. A mask's sound
 * constraint may hold suspicious characters: they are highlighted inside the mask.
 */
function appendMarked(
  parent: HTMLElement,
  text: string,
  marks: readonly Mark[],
  from: number,
  to: number,
  highlightAll: boolean,
): void {
  let last = from;
  for (let i = 0; i < marks.length; i++) {
    const mark = marks[i]!;
    if (mark.kind === 'suspicious' && !highlightAll) continue;
    if (mark.start > last) parent.append(text.slice(last, mark.start));
    const el = document.createElement('mark');
    let end = mark.end;
    if (mark.kind === 'mask') {
      el.className = 'mark-mask';
      let inside = i + 1;
      while (inside < marks.length && marks[inside]!.start < end) inside++;
      appendMarked(el, text, marks.slice(i + 1, inside), mark.start, end, highlightAll);
      i = inside - 1;
    } else {
      // One highlight for the whole run (a bar where all of it takes no width).
      let zeroWidth = mark.zeroWidth === true;
      while (marks[i + 1]?.kind === 'suspicious' && marks[i + 1]!.start === end) {
        end = marks[++i]!.end;
        zeroWidth &&= marks[i]!.zeroWidth === true;
      }
      el.className = `mark-suspicious${zeroWidth ? ' zero-width' : ''}`;
      el.textContent = text.slice(mark.start, end);
    }
    parent.append(el);
    last = end;
  }
  if (last < to) parent.append(text.slice(last, to));
}

/** The span of a piece: its text with its marks. */
function renderPiece(text: string, marks: readonly Mark[], highlightAll: boolean): HTMLSpanElement {
  const span = document.createElement('span');
  appendMarked(span, text, marks, 0, text.length, highlightAll);
  return span;
}

/**
 * True when `next` has the same nodes as `shown` (the same elements and classes, text where it
 * has text), collecting in `texts` the text nodes of `shown` whose text differs and their new text.
 */
function sameNodes(shown: Node, next: Node, texts: Array<[Text, string]>): boolean {
  if (shown.nodeType !== next.nodeType) return false;
  if (shown instanceof Text) {
    const data = (next as Text).data;
    if (shown.data !== data) texts.push([shown, data]);
    return true;
  }
  const a = shown as Element;
  const b = next as Element;
  if (a.className !== b.className || a.childNodes.length !== b.childNodes.length) return false;
  for (let i = 0; i < a.childNodes.length; i++) if (!sameNodes(a.childNodes[i]!, b.childNodes[i]!, texts)) return false;
  return true;
}

/** A suspicious character as the warnings list it: offsets in the text, its 1-based position in code points. */
export type Located = Mark & { position: number };

export class Backdrop {
  /** The blocks (its height is the text's). */
  readonly content: HTMLDivElement;
  /** Keeps the last line (empty after a trailing newline) its height, as in the textarea. */
  private readonly end = document.createTextNode('\u200b');
  private pieces: Piece[] = [];
  private text = '';
  private suspiciousTotal = 0;
  private highlightAll = true;

  constructor(
    root: HTMLElement,
    private readonly maxHighlighted: number,
  ) {
    this.content = document.createElement('div');
    this.content.append(this.newBlock(this.end));
    root.replaceChildren(this.content);
  }

  /** How many suspicious characters the text holds. */
  get suspicious(): number {
    return this.suspiciousTotal;
  }

  /** False past `maxHighlighted` suspicious characters: only masks are drawn. */
  get highlightsAll(): boolean {
    return this.highlightAll;
  }

  /** The first `n` suspicious characters (walks the pieces, not the text). */
  firstSuspicious(n: number): Located[] {
    const found: Located[] = [];
    let before = 0; // code points before the piece
    for (const piece of this.pieces) {
      if (found.length === n) break;
      if (piece.suspicious > 0) {
        let unit = 0;
        let codePoints = 0;
        for (const mark of piece.marks) {
          if (mark.kind !== 'suspicious') continue;
          codePoints += codePointsIn(piece.text, unit, mark.start);
          unit = mark.start;
          found.push({
            ...mark,
            start: piece.start + mark.start,
            end: piece.start + mark.end,
            position: before + codePoints + 1,
          });
          if (found.length === n) break;
        }
      }
      before += piece.codePoints;
    }
    return found;
  }

  /** Shows `next` instead of the text shown so far, re-rendering only the pieces around what changed. */
  update(next: string): void {
    const previous = this.text;
    if (next === previous) return;
    const limit = Math.min(previous.length, next.length);
    let prefix = 0;
    while (prefix < limit && previous.charCodeAt(prefix) === next.charCodeAt(prefix)) prefix++;
    let suffix = 0;
    while (
      suffix < limit - prefix &&
      previous.charCodeAt(previous.length - 1 - suffix) === next.charCodeAt(next.length - 1 - suffix)
    )
      suffix++;
    const delta = next.length - previous.length;

    // The old pieces to replace, [i0, i1] (none when the text was empty), covering [from, to).
    let i0 = 0;
    let i1 = -1;
    let from = 0;
    let to = 0;
    if (this.pieces.length > 0) {
      const changedFrom = prefix;
      const changedTo = previous.length - suffix;
      let lo = Math.max(0, changedFrom - EDIT_MARGIN);
      for (let k = changedFrom - 1; k >= lo; k--) if (previous.charCodeAt(k) === 0x0a) lo = k + 1;
      let hi = Math.min(previous.length, changedTo + EDIT_MARGIN);
      for (let k = changedTo; k < hi; k++) if (previous.charCodeAt(k) === 0x0a) hi = k + 1;
      const first = Math.min(lo, previous.length - 1);
      i0 = this.pieceAt(first);
      i1 = this.pieceAt(Math.min(Math.max(hi - 1, first), previous.length - 1));
      from = this.pieces[i0]!.start;
      to = this.pieces[i1]!.start + this.pieces[i1]!.text.length;
    }

    const cut = cutPieces(next.slice(from, to + delta));
    let removed = 0;
    for (let k = i0; k <= i1; k++) removed += this.pieces[k]!.suspicious;
    const counts = cut.map((piece) => piece.marks.filter((mark) => mark.kind === 'suspicious').length);
    const total = this.suspiciousTotal - removed + counts.reduce((a, b) => a + b, 0);
    const highlightAll = total <= this.maxHighlighted;
    const redrawOthers = highlightAll !== this.highlightAll;
    this.highlightAll = highlightAll;
    this.suspiciousTotal = total;

    const added: Piece[] = cut.map((piece, k) => ({
      start: from + piece.start,
      text: piece.text,
      marks: piece.marks,
      suspicious: counts[k]!,
      codePoints: codePointsIn(piece.text, 0, piece.text.length),
      el: renderPiece(piece.text, piece.marks, highlightAll),
      block: this.content, // set when placed
    }));
    // An edit inside one piece that keeps its marks (typing in a run of text, mostly) changes the
    // text of its text node in place: the browser shapes that node again and keeps the shaping of
    // all the others, where a new node would have its whole paragraph collected and shaped again.
    const texts: Array<[Text, string]> = [];
    const old = this.pieces[i0];
    if (i0 === i1 && added.length === 1 && !redrawOthers && sameNodes(old!.el, added[0]!.el, texts)) {
      for (const [node, data] of texts) node.data = data;
      added[0]!.el = old!.el;
      added[0]!.block = old!.block;
    } else this.place(i0, i1, to === previous.length, added);
    for (let k = i1 + 1; k < this.pieces.length; k++) this.pieces[k]!.start += delta;
    this.pieces = this.pieces.slice(0, i0).concat(added, this.pieces.slice(i1 + 1));
    this.text = next;

    // Crossing maxHighlighted: every other piece with suspicious characters is drawn again (once).
    if (redrawOthers) {
      for (const [k, piece] of this.pieces.entries()) {
        if (piece.suspicious === 0 || (k >= i0 && k < i0 + added.length)) continue;
        const el = renderPiece(piece.text, piece.marks, highlightAll);
        piece.el.replaceWith(el);
        piece.el = el;
      }
    }
  }

  /** The index of the piece holding unit `pos` (binary search). */
  private pieceAt(pos: number): number {
    let lo = 0;
    let hi = this.pieces.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.pieces[mid]!.start <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private newBlock(...nodes: Node[]): HTMLDivElement {
    const block = document.createElement('div');
    block.append(...nodes);
    return block;
  }

  /**
   * Puts `added` in the DOM where the old pieces [i0, i1] were (none: the text was empty): in the
   * block of the pieces before them (the head), with those after them (the tail; with the end
   * marker when they reach the end of the text, `toEnd`). Where head and tail were in different
   * blocks, the smaller block's pieces move to the other. A block grown past BLOCK_MAX is then cut.
   */
  private place(i0: number, i1: number, toEnd: boolean, added: Piece[]): void {
    const pieces = this.pieces;
    const lastBlock = this.end.parentNode as HTMLElement;
    const first = i0 <= i1 ? pieces[i0]!.block : lastBlock;
    const last = toEnd ? lastBlock : pieces[i1]!.block;
    const anchor = toEnd ? this.end : pieces[i1]!.el.nextSibling;
    for (let k = i0; k <= i1; k++) pieces[k]!.el.remove();
    for (let block = first === last ? null : first.nextElementSibling; block && block !== last;) {
      const following = block.nextElementSibling;
      block.remove();
      block = following;
    }
    let head = i0;
    while (head > 0 && pieces[head - 1]!.block === first) head--;
    let tail = i1;
    while (tail + 1 < pieces.length && pieces[tail + 1]!.block === last) tail++;
    const units = (from: number, to: number) => {
      let n = 0;
      for (let k = from; k < to; k++) n += pieces[k]!.text.length;
      return n;
    };
    let block = first;
    if (first === last) {
      for (const piece of added) this.move(piece, first, anchor);
    } else if (units(head, i0) <= units(i1 + 1, tail + 1)) {
      for (let k = head; k < i0; k++) this.move(pieces[k]!, last, anchor);
      for (const piece of added) this.move(piece, last, anchor);
      first.remove();
      block = last;
    } else {
      for (const piece of added) this.move(piece, first, null);
      for (let k = i1 + 1; k <= tail; k++) this.move(pieces[k]!, first, null);
      if (this.end.parentNode === last) first.append(this.end);
      last.remove();
    }
    // The pieces now in `block`, in the order of the text.
    const inBlock = [...pieces.slice(head, i0), ...added, ...pieces.slice(i1 + 1, tail + 1)];
    this.cutBlock(block, inBlock);
  }

  private move(piece: Piece, block: HTMLElement, before: Node | null): void {
    block.insertBefore(piece.el, before);
    piece.block = block;
  }

  /**
   * Cuts `block` (holding `inBlock`) into blocks of about BLOCK_UNITS if it holds more than
   * BLOCK_MAX, only after pieces that end with a newline, moving the smaller side each time: a
   * long paragraph stays one block, and a keystroke never moves more than a block's worth.
   */
  private cutBlock(block: HTMLElement, inBlock: Piece[]): void {
    let total = 0;
    for (const piece of inBlock) total += piece.text.length;
    if (total <= BLOCK_MAX) return;
    let from = 0; // inBlock[from..] is what is still in `block`
    let to = inBlock.length;
    while (total > BLOCK_MAX) {
      // From the front: the pieces up to the first newline end at or past BLOCK_UNITS.
      let units = 0;
      let cut = -1;
      for (let k = from; k < to - 1 && units < BLOCK_MAX; k++) {
        units += inBlock[k]!.text.length;
        if (inBlock[k]!.text.endsWith('\n') && units >= BLOCK_UNITS / 2) {
          cut = k;
          if (units >= BLOCK_UNITS) break;
        }
      }
      if (cut >= 0) {
        const front = this.newBlock();
        block.before(front);
        let moved = 0;
        for (let k = from; k <= cut; k++) {
          moved += inBlock[k]!.text.length;
          this.move(inBlock[k]!, front, null);
        }
        total -= moved;
        from = cut + 1;
        continue;
      }
      // From the back: the pieces after the last newline that leaves BLOCK_UNITS or so behind them.
      units = 0;
      for (let k = to - 1; k > from && units < BLOCK_MAX; k--) {
        units += inBlock[k]!.text.length;
        if (inBlock[k - 1]!.text.endsWith('\n') && units >= BLOCK_UNITS / 2) {
          cut = k;
          if (units >= BLOCK_UNITS) break;
        }
      }
      if (cut < 0) return; // a paragraph longer than a block, with little around it
      const back = this.newBlock();
      block.after(back);
      let moved = 0;
      for (let k = cut; k < to; k++) {
        moved += inBlock[k]!.text.length;
        this.move(inBlock[k]!, back, null);
      }
      if (this.end.parentNode === block) back.append(this.end);
      total -= moved;
      to = cut;
    }
  }
}
