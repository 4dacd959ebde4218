/**
 * Two result views built on the runtime's attribution and joint decoding:
 * - the heatmap card: after a candidate is clicked, the text's tokens coloured by how much each
 *   supports that candidate (tk.explain: the drop in its log-probability when the token is
 *   masked), the 3 strongest marked ①②③;
 * - the 整词 cards: whole-word candidates for each run of adjacent masks (fill's `words`).
 * DOM APIs and textContent only; the views create their own cards inside the results section.
 */
import './explain-view.css';
import { formatPercent } from './format.js';
import { describeError } from './messages.js';
import type { ExplainResult, FillResult } from '../../src/types.js';

const RANK_MARKS = ['①', '②', '③'];

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A card of the results section, created before `anchor` on first use. */
function card(anchor: HTMLElement, className: string, testId: string): HTMLElement {
  let node = anchor.parentElement!.querySelector<HTMLElement>(`:scope > [data-testid="${testId}"]`);
  if (!node) {
    node = el('section', className);
    node.dataset.testid = testId;
    anchor.before(node);
  }
  return node;
}

/**
 * Heat of a score relative to the strongest |score| of the text: -1 … 1. Scores are log-prob
 * drops, comparable within one explanation only, so the scale is per explanation.
 */
export function heat(score: number | null, strongest: number): number {
  if (score === null || strongest <= 0) return 0;
  return Math.max(-1, Math.min(1, score / strongest));
}

/** The heatmap card: shows explanations of clicked candidates, dropping stale ones. */
export class HeatmapView {
  private controller: AbortController | null = null;

  constructor(private readonly anchor: HTMLElement) {}

  /** Explains a candidate: `run` calls tk.explain with the given signal; a newer call cancels it. */
  async show(label: string, run: (signal: AbortSignal) => Promise<ExplainResult>): Promise<void> {
    this.controller?.abort('superseded');
    const controller = new AbortController();
    this.controller = controller;
    const target = card(this.anchor, 'card heatmap-card', 'heatmap');
    target.hidden = false;
    target.replaceChildren(
      el('h3', 'heatmap-title', `为什么是「${label}」？`),
      el('p', 'heatmap-note', '正在逐字分析…'),
    );
    try {
      const explanation = await run(controller.signal);
      if (this.controller === controller) this.render(target, label, explanation);
    } catch (error) {
      if (controller.signal.aborted) return;
      const { title, detail } = describeError(error);
      const more = el('details', 'error-more');
      more.append(el('summary', '', '技术细节'), el('p', 'error-detail', detail));
      more.querySelector('p')!.lang = 'en';
      target.replaceChildren(
        el('h3', 'heatmap-title', `为什么是「${label}」？`),
        el('p', 'heatmap-note', `分析失败：${title}`),
        more,
      );
    }
  }

  /** Hides the card (e.g. for a new prediction) and cancels a pending explanation. */
  clear(): void {
    this.controller?.abort('superseded');
    this.controller = null;
    const existing = this.anchor.parentElement?.querySelector<HTMLElement>(':scope > [data-testid="heatmap"]');
    if (existing) existing.hidden = true;
  }

  private render(target: HTMLElement, label: string, explanation: ExplainResult): void {
    const strongest = Math.max(0, ...explanation.tokens.map((t) => Math.abs(t.score ?? 0)));
    const line = el('p', 'heatmap-text');
    explanation.tokens.forEach((token, index) => {
      const isMask = token.score === null;
      const span = el(
        'span',
        isMask ? 'heat-token heat-mask' : 'heat-token',
        isMask ? '▢' : explanation.text.slice(token.start, token.end),
      );
      span.dataset.testid = 'heatmap-token';
      const level = heat(token.score, strongest);
      if (level > 0) span.style.backgroundColor = `rgba(239, 68, 68, ${(0.12 + 0.68 * level).toFixed(3)})`;
      else if (level < 0) span.style.backgroundColor = `rgba(59, 130, 246, ${(0.12 + 0.68 * -level).toFixed(3)})`;
      const rank = explanation.top.indexOf(index);
      if (rank >= 0) {
        span.classList.add('heat-top');
        span.dataset.rank = String(rank + 1);
        span.append(el('sup', 'heat-rank', RANK_MARKS[rank]));
      }
      if (!isMask) {
        span.title = `${token.token}：${token.score! >= 0 ? '+' : ''}${token.score!.toFixed(3)}`;
        span.setAttribute(
          'aria-label',
          `${token.token}${rank >= 0 ? `，第 ${rank + 1} 重要` : ''}，影响 ${token.score!.toFixed(2)}`,
        );
      }
      line.append(span);
    });
    target.replaceChildren(
      el('h3', 'heatmap-title', `为什么是「${label}」？`),
      line,
      el(
        'p',
        'heatmap-note',
        '红色越深，这个字越支持该候选（把它遮住后候选的对数概率下降越多）；蓝色表示它不利于该候选。①②③ 为最重要的三个字。',
      ),
    );
  }
}

/**
 * The 整词 cards, one per run of adjacent masks (empty for none). `pressed(w)` is the candidate of
 * word w shown as picked (-1: none, e.g. after a per-mask pick inside the word);
 * `onChoose(wordIndex, candidateIndex)` is called when a whole-word candidate is clicked.
 */
export function renderWords(
  anchor: HTMLElement,
  result: Pick<FillResult, 'words'>,
  pressed: (wordIndex: number) => number,
  onChoose: (wordIndex: number, candidateIndex: number) => void,
): void {
  const container = card(anchor, 'word-results', 'word-results');
  const words = result.words ?? [];
  container.hidden = words.length === 0;
  container.replaceChildren(
    ...words.map((word, wordIndex) => {
      const section = el('section', 'card word-card');
      const first = word.maskIndices[0]! + 1;
      const last = word.maskIndices[word.maskIndices.length - 1]! + 1;
      section.append(
        el('h3', 'word-title', `整词 · 第 ${first}–${last} 处（${word.maskIndices.length} 字连在一起预测）`),
      );
      const list = el('ul', 'word-candidates');
      word.candidates.forEach((candidate, candidateIndex) => {
        const button = el('button', 'word-candidate');
        button.type = 'button';
        button.dataset.testid = 'word-candidate';
        button.dataset.text = candidate.text;
        button.setAttribute('aria-pressed', String(pressed(wordIndex) === candidateIndex));
        button.setAttribute('aria-label', `${candidate.text}，联合得分 ${formatPercent(candidate.score)}，点击填入`);
        button.append(
          el('span', 'word-text', candidate.text),
          el('span', 'word-score', formatPercent(candidate.score)),
        );
        button.addEventListener('click', () => onChoose(wordIndex, candidateIndex));
        const item = el('li', '');
        item.append(button);
        list.append(item);
      });
      section.append(list);
      return section;
    }),
  );
}
