/**
 * The 纠错 mode: the text is checked while the user types (debounced; an edit cancels the check
 * still running for the text before it), flagged characters are underlined in the editor and
 * listed below it; a tap on one — in the list or on the underlined character — shows its
 * suggestions with pinyin, and a suggestion replaces it. Checks run in the runtime's Worker, so
 * typing never waits for one; everything works offline once the model is cached.
 */
import { applyCorrections, carryOver, correctionAt, type ShownCorrection } from './check-state.js';
import { renderCheckPanel, TypoLayer, type CheckStatus } from './check-view.js';
import type { MaskEditor } from './editor.js';
import { describeError } from './messages.js';
import type { CheckResult, FillMaskModel } from './runtime.js';

/** Quiet time after a keystroke before the text is checked. */
export const CHECK_DEBOUNCE_MS = 250;

export interface CheckModeParts {
  editor: MaskEditor;
  textarea: HTMLTextAreaElement;
  /** The element around the textarea (the underline layer goes in it, behind the textarea). */
  editorBox: HTMLElement;
  panel: HTMLElement;
  /** The loaded model, or null while it loads. */
  model: () => FillMaskModel | null;
  /** Called with every finished check (the page shows its timings). */
  onChecked: (result: CheckResult) => void;
}

export class CheckMode {
  private enabled = false;
  /** The text `corrections` refer to (the editor's text, once carried over). */
  private text = '';
  private corrections: ShownCorrection[] = [];
  /** The correction whose suggestions are open, or -1. */
  private active = -1;
  private status: CheckStatus = { state: 'idle' };
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inflight: AbortController | null = null;
  /** Characters the user chose never to see flagged (passed as the check's keep-list). */
  private readonly keep = new Set<string>();
  private readonly layer: TypoLayer;

  constructor(private readonly parts: CheckModeParts) {
    this.layer = new TypoLayer(parts.editorBox, parts.textarea);
    // A tap on an underlined character opens its suggestions (the textarea lies over the underlines).
    parts.textarea.addEventListener('click', () => {
      if (!this.enabled || parts.textarea.selectionStart !== parts.textarea.selectionEnd) return;
      const index = correctionAt(this.corrections, parts.textarea.selectionStart);
      if (index >= 0 && index !== this.active) this.open(index);
    });
  }

  get isEnabled(): boolean {
    return this.enabled;
  }

  /** Shows the mode and checks the editor's text at once. */
  enable(): void {
    this.enabled = true;
    this.text = this.parts.editor.value;
    this.corrections = [];
    this.active = -1;
    this.checkNow();
  }

  /** Hides the underlines and the list and cancels any check. */
  disable(): void {
    this.enabled = false;
    this.cancel();
    this.corrections = [];
    this.active = -1;
    this.layer.show('', [], -1);
    this.parts.panel.hidden = true;
  }

  /** The model has loaded: check what is in the editor. */
  modelReady(): void {
    if (this.enabled) this.checkNow();
  }

  /** After every edit: keeps the flags the edit did not touch and checks again once typing pauses. */
  textChanged(text: string): void {
    if (!this.enabled || text === this.text) return;
    const open = this.corrections[this.active];
    this.corrections = carryOver(this.text, text, this.corrections);
    this.active = open
      ? this.corrections.findIndex((c) => c.original === open.original && c.candidates === open.candidates)
      : -1;
    this.text = text;
    this.cancel();
    if (this.corrections.length > 0 || this.status.state !== 'idle') this.status = { state: 'checking' };
    this.render();
    this.timer = setTimeout(() => void this.run(), CHECK_DEBOUNCE_MS);
  }

  /** Checks now (Ctrl+Enter, a chip, the model becoming ready). */
  checkNow(): void {
    this.cancel();
    void this.run();
  }

  private cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.inflight?.abort('superseded');
    this.inflight = null;
  }

  private async run(): Promise<void> {
    const tk = this.parts.model();
    const text = this.parts.editor.value;
    this.text = text;
    if (!tk || text.trim() === '') {
      this.corrections = [];
      this.active = -1;
      this.status = { state: 'idle' };
      this.render();
      return;
    }
    const controller = new AbortController();
    this.inflight = controller;
    this.status = { state: 'checking' };
    this.render();
    try {
      const result = await tk.check(text, { keep: [...this.keep], signal: controller.signal });
      if (controller.signal.aborted || this.parts.editor.value !== text) return;
      const open = this.corrections[this.active];
      this.corrections = result.corrections;
      this.active = open ? this.corrections.findIndex((c) => c.start === open.start) : -1;
      this.status = { state: 'done', checked: result.checked, ms: result.timings.totalMs, cached: result.cached };
      this.parts.onChecked(result);
    } catch (error) {
      if (controller.signal.aborted) return;
      const message = describeError(error);
      this.corrections = [];
      this.active = -1;
      this.status = { state: 'error', title: message.title, advice: message.advice };
    } finally {
      if (this.inflight === controller) this.inflight = null;
    }
    this.render();
  }

  private open(index: number): void {
    this.active = index;
    this.render();
  }

  /** Puts `token` in place of correction `index` (if its character is still there). */
  private accept(index: number, token: string): void {
    const c = this.corrections[index];
    if (!c || this.parts.editor.value.slice(c.start, c.end) !== c.original) return;
    this.active = -1;
    this.parts.editor.replaceRange(c.start, c.end, token); // -> textChanged: the others stay, a check follows
  }

  private acceptAll(): void {
    const value = this.parts.editor.value;
    const next = applyCorrections(
      value,
      this.corrections.map((c) => ({ ...c, chosen: c.suggestion })),
    );
    this.active = -1;
    if (next !== value) this.parts.editor.value = next;
  }

  private ignore(index: number): void {
    const c = this.corrections[index];
    if (!c) return;
    this.keep.add(c.original);
    this.corrections = this.corrections.filter((other) => other.original !== c.original);
    this.active = -1;
    this.render();
  }

  private render(): void {
    if (!this.enabled) return;
    this.layer.show(this.text, this.corrections, this.active);
    renderCheckPanel(this.parts.panel, this.corrections, this.active, this.status, {
      open: (index) => this.open(index),
      accept: (index, token) => this.accept(index, token),
      ignore: (index) => this.ignore(index),
      acceptAll: () => this.acceptAll(),
    });
  }
}
