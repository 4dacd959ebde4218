/**
 * The 平仄 view: the input line with each character's tone class under it (中华新韵: tones 1–2 平,
 * 3–4 仄), polyphones whose class depends on the word outlined, their readings in the tooltip.
 * Readings come from the core's pinyin table through the runtime (`readings`), so they need no
 * model run; the view follows the text while it is open, debounced, and only over its first
 * TONE_VIEW_LIMIT characters so that a huge paste costs no more than a short line.
 */
import type { CharReading, FillMaskModel, FillMaskPreview, ReadingsResult } from './runtime.js';
import { findMasks, headOf } from './text-marks.js';

/** Quiet time after a keystroke before the line is read again. */
export const TONE_VIEW_DEBOUNCE_MS = 120;
/** UTF-16 units of the text the view shows (a poem's worth; longer text is cut with a note). */
export const TONE_VIEW_LIMIT = 600;

export interface ToneViewParts {
  toggle: HTMLButtonElement;
  panel: HTMLElement;
  line: HTMLElement;
  note: HTMLElement;
  /** What answers `readings`: the model, the preview while it loads, or null before either. */
  source: () => Pick<FillMaskModel | FillMaskPreview, 'readings'> | null;
}

/** `text` with each blank, as the editor finds it ([MASK], 【MASK：平】), written □. */
function blanksAsSquares(text: string): string {
  let out = '';
  let at = 0;
  for (const mask of findMasks(text)) {
    out += `${text.slice(at, mask.start)}□`;
    at = mask.end;
  }
  return out + text.slice(at);
}

/** Appends `text` (between annotated characters) with its blanks as □ and its line breaks kept. */
function appendPlain(parent: ParentNode, text: string): void {
  if (!text) return;
  const lines = blanksAsSquares(text).split('\n');
  lines.forEach((line, i) => {
    if (i > 0) {
      const lineBreak = document.createElement('span');
      lineBreak.className = 'tone-break';
      parent.append(lineBreak);
    }
    if (line) {
      const span = document.createElement('span');
      span.className = 'tone-plain';
      span.textContent = line;
      parent.append(span);
    }
  });
}

function toneCell(reading: CharReading): HTMLElement {
  const cell = document.createElement('span');
  const kind = reading.tone === '平' ? 'ping' : reading.tone === '仄' ? 'ze' : 'neutral';
  cell.className = `tone-char tone-${kind}${reading.polyphone ? ' polyphone' : ''}`;
  cell.dataset.tone = reading.tone;
  if (reading.polyphone) cell.dataset.polyphone = 'true';
  cell.title = `${reading.pinyin.join(' · ')}${reading.polyphone ? '（多音字：平仄随读音）' : ''}`;
  const glyph = document.createElement('span');
  glyph.className = 'tone-glyph';
  glyph.textContent = reading.char;
  const mark = document.createElement('span');
  mark.className = 'tone-mark';
  mark.textContent = reading.tone === '轻声' ? '轻' : reading.tone;
  cell.append(glyph, mark);
  return cell;
}

/** Renders `result` into `line`: every character, the annotated ones with their class. */
export function renderToneLine(line: HTMLElement, result: ReadingsResult): void {
  const text = result.text;
  const content = document.createDocumentFragment();
  let at = 0;
  for (const reading of result.chars) {
    appendPlain(content, text.slice(at, reading.start));
    content.append(toneCell(reading));
    at = reading.end;
  }
  appendPlain(content, text.slice(at));
  line.replaceChildren(content);
}

export class ToneView {
  private open = false;
  private text = '';
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Increases with every request; an answer for an older one is dropped. */
  private generation = 0;

  constructor(private readonly parts: ToneViewParts) {
    parts.toggle.addEventListener('click', () => this.setOpen(!this.open));
  }

  /** The editor's text changed: read it again once the user pauses. */
  textChanged(text: string): void {
    this.text = text;
    if (!this.open) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), TONE_VIEW_DEBOUNCE_MS);
  }

  /** The preview or the model became ready: the view can now be drawn. */
  sourceReady(): void {
    if (this.open) void this.refresh();
  }

  setOpen(open: boolean): void {
    this.open = open;
    this.parts.toggle.setAttribute('aria-pressed', String(open));
    this.parts.panel.hidden = !open;
    clearTimeout(this.timer);
    if (open) void this.refresh();
    else this.generation++;
  }

  private async refresh(): Promise<void> {
    const generation = ++this.generation;
    const { line, note, source } = this.parts;
    const reader = source();
    const shown = headOf(this.text, TONE_VIEW_LIMIT);
    if (!reader) {
      line.replaceChildren();
      note.textContent = '正在加载读音表…';
      return;
    }
    let result: ReadingsResult;
    try {
      result = await reader.readings(shown);
    } catch (error) {
      if (generation !== this.generation) return;
      line.replaceChildren();
      note.textContent = `读音未能显示：${(error as Error).message}`;
      return;
    }
    if (generation !== this.generation) return;
    renderToneLine(line, result);
    const cut = shown.length < this.text.length ? `只显示前 ${TONE_VIEW_LIMIT} 字。` : '';
    note.textContent = !this.text.trim()
      ? '输入诗句后，这里显示每个字的平仄。'
      : result.chars.length === 0
        ? `${cut}这段文字里没有汉字。`
        : `${cut}按中华新韵：一、二声为平，三、四声为仄；虚线框是多音字，平仄随读音（指向可看读音）。`;
  }
}
