/**
 * What the 纠错 mode draws: a layer behind the textarea (laid out like it, as the editor's
 * backdrop is) that underlines the flagged characters, and the list under the editor — one
 * button per flagged character, which opens its suggestions with their pinyin; a suggestion
 * accepts it. DOM APIs and textContent only: the text and the tokens are never parsed as HTML.
 */
import type { ShownCorrection } from './check-state.js';
import { formatPercent } from './format.js';

const KIND_LABEL: Record<ShownCorrection['kind'], string> = {
  sound: '音近',
  shape: '形近',
  context: '不合语境',
};

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * The underlines: `text` again, transparent, with each correction a wavy-underlined <mark>.
 * Rendered whole on every change: a checked text is at most the model's length (hundreds of
 * characters), and longer texts are never checked (TOO_LONG), so they show no underlines.
 */
export class TypoLayer {
  private readonly layer: HTMLDivElement;
  private shown = '';

  constructor(editor: HTMLElement, before: HTMLElement) {
    this.layer = el('div', 'editor-backdrop typo-layer');
    this.layer.setAttribute('aria-hidden', 'true');
    this.layer.dataset.testid = 'typo-layer';
    editor.insertBefore(this.layer, before);
  }

  /** Underlines `corrections` (sorted, offsets into `text`); `active` is the one whose suggestions are open. */
  show(text: string, corrections: readonly ShownCorrection[], active: number): void {
    if (corrections.length === 0) {
      // Nothing to underline: no copy of the text at all (it may be a long paste that is never checked).
      if (this.shown !== '') this.layer.replaceChildren();
      this.shown = '';
      return;
    }
    const signature = `${active}|${corrections.map((c) => `${c.start}:${c.end}`).join(',')}|${text}`;
    if (signature === this.shown) return;
    this.shown = signature;
    const nodes: Array<Node | string> = [];
    let last = 0;
    corrections.forEach((c, index) => {
      if (c.start > last) nodes.push(text.slice(last, c.start));
      const mark = el('mark', `mark-typo${index === active ? ' active' : ''}`, text.slice(c.start, c.end));
      nodes.push(mark);
      last = c.end;
    });
    nodes.push(text.slice(last), '\u200b');
    this.layer.replaceChildren(...nodes);
  }
}

export interface CheckPanelActions {
  /** Opens (or closes, for -1) the suggestions of correction `index`. */
  open(index: number): void;
  accept(index: number, token: string): void;
  /** Never flags this character again in this page. */
  ignore(index: number): void;
  acceptAll(): void;
}

/** What the panel says above the list. */
export type CheckStatus =
  | { state: 'idle' }
  | { state: 'checking' }
  | { state: 'done'; checked: number; ms: number; cached: boolean }
  | { state: 'error'; title: string; advice: string };

function statusLine(status: CheckStatus, count: number): string {
  switch (status.state) {
    case 'idle':
      return '输入或粘贴一段中文，会自动找出可能写错的字。';
    case 'checking':
      return count > 0 ? `发现 ${count} 处可能写错的字（正在重新检查…）` : '正在检查…';
    case 'done':
      return count > 0
        ? `发现 ${count} 处可能写错的字，点选查看建议：`
        : status.checked > 0
          ? `✓ 没有发现错字（检查了 ${status.checked} 个字）`
          : '没有可检查的汉字。';
    case 'error':
      return `${status.title}：${status.advice}`;
  }
}

/**
 * Renders the list of `corrections` into `panel`: the status line, "全部接受", one button per
 * flagged character (original → suggestion, its kind), and under the `active` one its
 * candidates (token, pinyin, score) and "忽略".
 */
export function renderCheckPanel(
  panel: HTMLElement,
  corrections: readonly ShownCorrection[],
  active: number,
  status: CheckStatus,
  actions: CheckPanelActions,
): void {
  const head = el('div', 'check-head');
  const line = el(
    'p',
    `check-status${status.state === 'error' ? ' error-text' : ''}`,
    statusLine(status, corrections.length),
  );
  line.dataset.testid = 'check-status';
  head.append(line);
  if (corrections.length > 1) {
    const all = el('button', 'button small', '全部接受');
    all.type = 'button';
    all.dataset.testid = 'check-accept-all';
    all.addEventListener('click', () => actions.acceptAll());
    head.append(all);
  }
  const list = el('div', 'check-list');
  corrections.forEach((c, index) => {
    const item = el('button', 'check-item');
    item.type = 'button';
    item.dataset.testid = 'check-item';
    item.setAttribute('aria-expanded', String(index === active));
    item.append(
      el('span', 'check-original', c.original),
      el('span', 'check-arrow', '→'),
      el('span', 'check-suggestion', c.suggestion),
      el('span', 'check-kind', KIND_LABEL[c.kind]),
    );
    item.title = `「${c.original}」可能应为「${c.suggestion}」（${KIND_LABEL[c.kind]}），点击查看建议`;
    item.addEventListener('click', () => actions.open(index === active ? -1 : index));
    list.append(item);
  });
  const children: HTMLElement[] = [head, list];
  const open = corrections[active];
  if (open) children.push(suggestions(open, active, actions));
  panel.replaceChildren(...children);
  panel.hidden = false;
}

/** The candidates of one correction: each a button that accepts it, with pinyin and score. */
function suggestions(c: ShownCorrection, index: number, actions: CheckPanelActions): HTMLElement {
  const box = el('div', 'check-suggestions');
  box.dataset.testid = 'check-suggestions';
  box.append(el('span', 'check-suggestions-label', `「${c.original}」可能应为：`));
  for (const candidate of c.candidates) {
    const button = el('button', 'check-candidate');
    button.type = 'button';
    button.dataset.testid = 'check-candidate';
    button.append(
      el('span', 'check-candidate-token', candidate.token),
      el('span', 'check-candidate-pinyin', candidate.pinyin.slice(0, 2).join(' / ')),
      el('span', 'check-candidate-score', formatPercent(candidate.score)),
    );
    button.title = `把「${c.original}」改成「${candidate.token}」`;
    button.addEventListener('click', () => actions.accept(index, candidate.token));
    box.append(button);
  }
  const ignore = el('button', 'button small check-ignore', `不改，不再标出「${c.original}」`);
  ignore.type = 'button';
  ignore.dataset.testid = 'check-ignore';
  ignore.addEventListener('click', () => actions.ignore(index));
  box.append(ignore);
  return box;
}
