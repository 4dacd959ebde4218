/**
 * The sentence editor: a textarea over a backdrop that paints the highlights (the overlay
 * technique — the textarea's text stays real and editable; the backdrop, with the same font
 * and wrapping, draws mask and warning backgrounds behind it). Below it, a list of the
 * suspicious characters, each with a tooltip and a click that selects it.
 * An edit re-renders only the backdrop around it (text-marks.ts updateRuns), so a pasted
 * 200 000-character text with thousands of invisible characters stays responsive.
 * All text goes into the DOM through text nodes, never as HTML.
 */
import { applyRunsUpdate, cleanSuspicious, findMasks, type Mark, type Run, runsOf, updateRuns } from './text-marks.js';

export const MASK_TOKEN = '[MASK]';

/** Warning chips shown for the first suspicious characters; the rest are counted. */
const MAX_CHIPS = 8;
/** Beyond this many suspicious characters the backdrop highlights masks only (see renderBackdrop). */
export const MAX_HIGHLIGHTED = 2000;

export class MaskEditor {
  /** The text last rendered and its runs with every mark (what the warnings list). */
  private shown = '';
  private runs: Run[] = [];
  /** What the backdrop draws: every mark, or masks only when there are too many suspicious characters. */
  private highlightAll = true;
  private displayRuns: Run[] = [];
  /** One DOM node per display run. */
  private nodes: Node[] = [];
  /** Keeps a trailing newline its line, as in the textarea. */
  private readonly end = document.createTextNode('\u200b');
  private lastWarnings = '';

  constructor(
    private readonly textarea: HTMLTextAreaElement,
    private readonly backdrop: HTMLElement,
    private readonly warnings: HTMLElement,
    private readonly onChange: (text: string) => void,
  ) {
    backdrop.replaceChildren(this.end);
    textarea.addEventListener('input', () => this.refresh());
    textarea.addEventListener('scroll', () => this.syncScroll());
    new ResizeObserver(() => this.fitHeight(true)).observe(textarea.parentElement ?? textarea);
    this.refresh();
  }

  get value(): string {
    return this.textarea.value;
  }

  set value(text: string) {
    this.textarea.value = text;
    this.refresh();
  }

  focus(): void {
    this.textarea.focus();
  }

  /** Inserts [MASK] at the cursor (replacing a selection) and puts the cursor after it. */
  insertMask(): void {
    const { selectionStart: start, selectionEnd: end } = this.textarea;
    this.textarea.focus();
    this.textarea.setRangeText(MASK_TOKEN, start, end, 'end');
    this.refresh();
  }

  /** Re-renders highlights and warnings after any change to the text. */
  private refresh(): void {
    const text = this.textarea.value;
    if (text !== this.shown) {
      const shrank = text.length < this.shown.length;
      this.renderBackdrop(text);
      this.renderWarnings();
      this.fitHeight(shrank);
    }
    this.onChange(text);
  }

  private nodeFor(text: string, run: Run): Node {
    if (!run.mark) return document.createTextNode(text.slice(run.start, run.end));
    const el = document.createElement('mark');
    el.className = run.mark.kind === 'mask' ? 'mark-mask' : `mark-suspicious${run.mark.zeroWidth ? ' zero-width' : ''}`;
    el.textContent = text.slice(run.start, run.end);
    return el;
  }

  /**
   * Updates the runs and the backdrop around the edit only; the rest keep their nodes. Past
   * MAX_HIGHLIGHTED suspicious characters the backdrop draws masks only (every mark is an
   * inline box the browser lays out again on each keystroke); the warning list still counts them.
   */
  private renderBackdrop(text: string): void {
    const update = updateRuns(this.shown, this.runs, text);
    this.runs = applyRunsUpdate(this.runs, update);
    let suspicious = 0;
    for (const run of this.runs) if (run.mark?.kind === 'suspicious') suspicious++;
    const highlightAll = suspicious <= MAX_HIGHLIGHTED;
    if (highlightAll !== this.highlightAll) {
      this.highlightAll = highlightAll;
      this.backdrop.classList.toggle('masks-only', !highlightAll);
      this.displayRuns = highlightAll ? this.runs : runsOf(text, 0, text.length, findMasks);
      this.nodes = this.displayRuns.map((run) => this.nodeFor(text, run));
      this.backdrop.replaceChildren(...this.nodes, this.end);
    } else {
      const shown = highlightAll ? update : updateRuns(this.shown, this.displayRuns, text, findMasks);
      const keptTail = this.displayRuns.length - shown.tail;
      for (const node of this.nodes.slice(shown.head, keptTail)) node.parentNode?.removeChild(node);
      const created = shown.middle.map((run) => this.nodeFor(text, run));
      const before = this.nodes[keptTail] ?? this.end;
      for (const node of created) this.backdrop.insertBefore(node, before);
      this.displayRuns = highlightAll ? this.runs : applyRunsUpdate(this.displayRuns, shown);
      this.nodes = [...this.nodes.slice(0, shown.head), ...created, ...this.nodes.slice(keptTail)];
    }
    this.shown = text;
    this.syncScroll();
  }

  /** The suspicious characters (from the runs: no second scan of the text). */
  private suspicious(): Mark[] {
    const marks: Mark[] = [];
    for (const run of this.runs) if (run.mark?.kind === 'suspicious') marks.push(run.mark);
    return marks;
  }

  private renderWarnings(): void {
    const suspicious = this.suspicious();
    const text = this.shown;
    const chipped = suspicious.slice(0, MAX_CHIPS);
    // Code-point positions of the chipped marks, in one pass up to the last of them.
    const positions: number[] = [];
    let codePoints = 0;
    let unit = 0;
    for (const mark of chipped) {
      for (; unit < mark.start; unit++) {
        const c = text.charCodeAt(unit);
        if (!(
          c >= 0xdc00 &&
          c <= 0xdfff &&
          unit > 0 &&
          text.charCodeAt(unit - 1) >= 0xd800 &&
          text.charCodeAt(unit - 1) <= 0xdbff
        ))
          codePoints++;
      }
      positions.push(codePoints + 1);
    }
    const signature = `${suspicious.length}|${chipped.map((m, i) => `${m.start}:${positions[i]}:${m.label}`).join(',')}`;
    if (signature === this.lastWarnings) return;
    this.lastWarnings = signature;
    this.warnings.hidden = suspicious.length === 0;
    if (suspicious.length === 0) {
      this.warnings.replaceChildren();
      return;
    }
    const intro = document.createElement('span');
    intro.textContent =
      `⚠️ 发现 ${suspicious.length} 个不可见或特殊字符（可能来自复制粘贴）` +
      `${suspicious.length > MAX_HIGHLIGHTED ? '，太多了，输入框里不再逐个标出' : ''}：`;
    const chips = chipped.map((mark, i) => {
      const chip = document.createElement('button');
      chip.type = 'button';
      chip.className = 'warning-chip';
      chip.textContent = `第 ${positions[i]} 字 · ${mark.label}`;
      chip.title = `${mark.label}：看不见或与普通空格不同，点击在输入框中选中它`;
      chip.addEventListener('click', () => {
        this.textarea.focus();
        this.textarea.setSelectionRange(mark.start, mark.end);
      });
      return chip;
    });
    const more =
      suspicious.length > MAX_CHIPS
        ? [Object.assign(document.createElement('span'), { textContent: `等 ${suspicious.length} 处` })]
        : [];
    const clean = document.createElement('button');
    clean.type = 'button';
    clean.className = 'warning-chip';
    clean.textContent = '一键清除';
    clean.title = '删除不可见字符，把特殊空格换成普通空格';
    clean.addEventListener('click', () => {
      this.value = cleanSuspicious(this.textarea.value);
      this.textarea.focus();
    });
    this.warnings.replaceChildren(intro, ...chips, ...more, clean);
  }

  /**
   * Grows the textarea with its content, so it never scrolls away from its backdrop. Growing
   * reads one layout; only when the text shrank (or the width changed) is the height measured
   * from scratch, which lays the whole text out twice.
   */
  private fitHeight(remeasure: boolean): void {
    if (remeasure) this.textarea.style.height = 'auto';
    const needed = this.textarea.scrollHeight + 2;
    if (remeasure || needed > this.textarea.offsetHeight) this.textarea.style.height = `${needed}px`;
    this.syncScroll();
  }

  private syncScroll(): void {
    this.backdrop.scrollTop = this.textarea.scrollTop;
    this.backdrop.scrollLeft = this.textarea.scrollLeft;
  }
}
