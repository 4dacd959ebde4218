/**
 * The sentence editor: a textarea over a backdrop that paints the highlights (the overlay
 * technique — the textarea's text stays real and editable; the backdrop, with the same font
 * and wrapping, draws mask and warning backgrounds behind it). Below it, a list of the
 * suspicious characters, each with a tooltip and a click that selects it.
 * A keystroke costs work around it only (backdrop.ts: pieces of at most 512 characters in blocks
 * cut after newlines, one highlight per run of invisible characters), and the height is measured
 * once a frame from the backdrop, never by collapsing the textarea: a pasted 200 000-character
 * text with thousands of invisible characters stays responsive.
 * All text goes into the DOM through text nodes, never as HTML.
 */
import { Backdrop } from './backdrop.js';
import { cleanSuspicious } from './text-marks.js';

export const MASK_TOKEN = '[MASK]';

/** Warning chips shown for the first suspicious characters; the rest are counted. */
const MAX_CHIPS = 8;
/** Beyond this many suspicious characters the backdrop highlights masks only (see backdrop.ts). */
export const MAX_HIGHLIGHTED = 2000;

export class MaskEditor {
  /** The text last rendered. */
  private shown = '';
  private readonly marks: Backdrop;
  private lastWarnings = '';
  /** The pending height measurement (one a frame, however many edits). */
  private fitting = 0;

  constructor(
    private readonly textarea: HTMLTextAreaElement,
    private readonly backdrop: HTMLElement,
    private readonly warnings: HTMLElement,
    private readonly onChange: (text: string) => void,
  ) {
    this.marks = new Backdrop(backdrop, MAX_HIGHLIGHTED);
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

  /**
   * Replaces text[start, end) with `text`, keeping the caret where it was when it lay outside the
   * range (a suggestion accepted from the list must not move the user's cursor).
   */
  replaceRange(start: number, end: number, text: string): void {
    this.textarea.setRangeText(text, start, end, 'preserve');
    this.refresh();
  }

  /** Re-renders highlights and warnings after any change to the text. */
  private refresh(): void {
    const text = this.textarea.value;
    if (text !== this.shown) {
      this.marks.update(text);
      this.shown = text;
      this.backdrop.classList.toggle('masks-only', !this.marks.highlightsAll);
      this.renderWarnings();
      this.fitting ||= requestAnimationFrame(() => {
        this.fitting = 0;
        this.fitHeight();
      });
    }
    this.onChange(text);
  }

  private renderWarnings(): void {
    const count = this.marks.suspicious;
    const chipped = this.marks.firstSuspicious(MAX_CHIPS);
    const signature = `${count}|${chipped.map((m) => `${m.start}:${m.position}:${m.label}`).join(',')}`;
    if (signature === this.lastWarnings) return;
    this.lastWarnings = signature;
    this.warnings.hidden = count === 0;
    if (count === 0) {
      this.warnings.replaceChildren();
      return;
    }
    const intro = document.createElement('span');
    intro.textContent =
      `⚠️ 发现 ${count} 个不可见或特殊字符（可能来自复制粘贴）` +
      `${count > MAX_HIGHLIGHTED ? '，太多了，输入框里不再逐个标出' : ''}：`;
    const chips = chipped.map((mark) => {
      const chip = document.createElement('button');
      chip.type = 'button';
      chip.className = 'warning-chip';
      chip.textContent = `第 ${mark.position} 字 · ${mark.label}`;
      chip.title = `${mark.label}：看不见或与普通空格不同，点击在输入框中选中它`;
      chip.addEventListener('click', () => {
        this.textarea.focus();
        this.textarea.setSelectionRange(mark.start, mark.end);
      });
      return chip;
    });
    const more =
      count > MAX_CHIPS ? [Object.assign(document.createElement('span'), { textContent: `等 ${count} 处` })] : [];
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
   * Fits the textarea to its text (never less than its rows), so it never scrolls away from its
   * backdrop: the backdrop's paragraphs are the text laid out at the same width, so their height
   * is the one needed, read with one layout that the frame needs anyway (never by setting the
   * height to auto, which lays the whole text out twice).
   */
  private fitHeight(): void {
    const style = getComputedStyle(this.backdrop);
    const px = (value: string) => parseFloat(value) || 0;
    const frame =
      px(style.paddingTop) + px(style.paddingBottom) + px(style.borderTopWidth) + px(style.borderBottomWidth);
    const text = Math.max(this.marks.content.getBoundingClientRect().height, this.textarea.rows * px(style.lineHeight));
    const needed = `${Math.ceil(text + frame)}px`;
    if (this.textarea.style.height !== needed) this.textarea.style.height = needed;
    this.syncScroll();
  }

  private syncScroll(): void {
    this.backdrop.scrollTop = this.textarea.scrollTop;
    this.backdrop.scrollLeft = this.textarea.scrollLeft;
  }
}
