/**
 * The sentence editor: a textarea over a backdrop that paints the highlights (the overlay
 * technique — the textarea's text stays real and editable; the backdrop, with the same font
 * and wrapping, draws mask and warning backgrounds behind it). Below it, a list of the
 * suspicious characters, each with a tooltip and a click that selects it.
 * All text goes into the DOM through text nodes, never as HTML.
 */
import { cleanSuspicious, findMarks, findSuspicious, type Mark } from './text-marks.js';

export const MASK_TOKEN = '[MASK]';

export class MaskEditor {
  constructor(
    private readonly textarea: HTMLTextAreaElement,
    private readonly backdrop: HTMLElement,
    private readonly warnings: HTMLElement,
    private readonly onChange: (text: string) => void,
  ) {
    textarea.addEventListener('input', () => this.refresh());
    textarea.addEventListener('scroll', () => this.syncScroll());
    new ResizeObserver(() => this.fitHeight()).observe(textarea.parentElement ?? textarea);
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
    this.renderBackdrop(text, findMarks(text));
    this.renderWarnings(findSuspicious(text));
    this.fitHeight();
    this.onChange(text);
  }

  private renderBackdrop(text: string, marks: Mark[]): void {
    const nodes: Node[] = [];
    let last = 0;
    for (const mark of marks) {
      if (mark.start > last) nodes.push(document.createTextNode(text.slice(last, mark.start)));
      const el = document.createElement('mark');
      el.className = mark.kind === 'mask' ? 'mark-mask' : `mark-suspicious${mark.zeroWidth ? ' zero-width' : ''}`;
      el.textContent = text.slice(mark.start, mark.end);
      nodes.push(el);
      last = mark.end;
    }
    // A trailing newline needs a following character to take up its line, as in the textarea.
    nodes.push(document.createTextNode(`${text.slice(last)}\u200b`));
    this.backdrop.replaceChildren(...nodes);
    this.syncScroll();
  }

  private renderWarnings(suspicious: Mark[]): void {
    this.warnings.hidden = suspicious.length === 0;
    if (suspicious.length === 0) {
      this.warnings.replaceChildren();
      return;
    }
    const intro = document.createElement('span');
    intro.textContent = `⚠️ 发现 ${suspicious.length} 个不可见或特殊字符（可能来自复制粘贴）：`;
    const chips = suspicious.slice(0, 8).map((mark) => {
      const chip = document.createElement('button');
      chip.type = 'button';
      chip.className = 'warning-chip';
      const position = [...this.textarea.value.slice(0, mark.start)].length + 1;
      chip.textContent = `第 ${position} 字 · ${mark.label}`;
      chip.title = `${mark.label}：看不见或与普通空格不同，点击在输入框中选中它`;
      chip.addEventListener('click', () => {
        this.textarea.focus();
        this.textarea.setSelectionRange(mark.start, mark.end);
      });
      return chip;
    });
    const clean = document.createElement('button');
    clean.type = 'button';
    clean.className = 'warning-chip';
    clean.textContent = '一键清除';
    clean.title = '删除不可见字符，把特殊空格换成普通空格';
    clean.addEventListener('click', () => {
      this.value = cleanSuspicious(this.textarea.value);
      this.textarea.focus();
    });
    this.warnings.replaceChildren(intro, ...chips, clean);
  }

  /** Grows the textarea with its content, so it never scrolls away from its backdrop. */
  private fitHeight(): void {
    this.textarea.style.height = 'auto';
    this.textarea.style.height = `${this.textarea.scrollHeight + 2}px`;
    this.syncScroll();
  }

  private syncScroll(): void {
    this.backdrop.scrollTop = this.textarea.scrollTop;
    this.backdrop.scrollLeft = this.textarea.scrollLeft;
  }
}
