/**
 * Rendering a fill result: one card per mask with its candidates (probability bars with
 * values, the rest grouped as 其他), and the filled-in sentence. A mask whose candidates the
 * filters (最低概率, 候选范围) all hid shows its unfiltered top candidates greyed, under a note —
 * never an empty list. DOM APIs and textContent only: tokens come from the model and are never
 * parsed as HTML.
 */
import type { Filled } from './fill-state.js';
import { formatPercent } from './format.js';
import type { CandidateSource, FillResult } from './runtime.js';

/** A fill result as the page shows it: a mask may carry `unfiltered` candidates (the filters hid all of its own). */
export type ShownResult = Omit<FillResult, 'masks'> & {
  masks: Array<FillResult['masks'][number] & { unfiltered?: boolean }>;
};

const CONTEXT_CHARS = 6;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function bar(probability: number): HTMLElement {
  const track = el('span', 'candidate-bar');
  const fill = el('span', 'candidate-bar-fill');
  fill.style.width = `${Math.max(probability * 100, 1)}%`;
  fill.style.display = 'block';
  track.append(fill);
  return track;
}

/** The text between `from` and `to` with every mask in it shown as ▢. */
function withMaskBoxes(result: FillResult, from: number, to: number): string {
  let out = '';
  let last = from;
  for (const mask of result.masks) {
    if (mask.end <= from || mask.start >= to) continue;
    out += result.text.slice(last, Math.max(mask.start, from)) + '▢';
    last = Math.min(mask.end, to);
  }
  return out + result.text.slice(last, to);
}

/** The words around mask `index`: "…疑是地", the slot, "霜。" (other masks as ▢). */
function maskContext(result: FillResult, index: number): HTMLElement {
  const mask = result.masks[index]!;
  const before = [...withMaskBoxes(result, 0, mask.start)];
  const after = [...withMaskBoxes(result, mask.end, result.text.length)];
  const context = el('span', 'mask-context');
  context.append(
    (before.length > CONTEXT_CHARS ? '…' : '') + before.slice(-CONTEXT_CHARS).join(''),
    el('mark', 'context-slot', '？'),
    after.slice(0, CONTEXT_CHARS).join('') + (after.length > CONTEXT_CHARS ? '…' : ''),
  );
  return context;
}

/** 出处 under a candidate: "出处 李白《静夜思》· 千家诗" and the sentence it completes. */
function sourceLine(source: CandidateSource): HTMLElement {
  const line = el('p', 'candidate-source');
  line.dataset.testid = 'candidate-source';
  if (source.work === '成语') {
    line.append(el('span', 'source-label', '成语'), el('span', 'source-title', source.title));
    if (source.pinyin) line.append(el('span', 'source-pinyin', source.pinyin));
    return line;
  }
  const who = `${source.author}${source.title ? `《${source.title}》` : ''}`;
  line.append(
    el('span', 'source-label', '出处'),
    el('span', 'source-title', who || source.work),
    el('span', 'source-work', source.author || source.title ? source.work : ''),
    el('span', 'source-text', source.text),
  );
  return line;
}

/**
 * Renders one card per mask into `container`. `pressed(i)` is the candidate shown as picked for
 * mask i (-1: none); `onChoose(mask, candidate)` is called when the user picks another.
 */
/**
 * The candidate's character with its likeliest reading above it (ruby, as pinyin is printed);
 * every reading in the tooltip. A token without a reading is the token alone.
 */
function tokenWithReading(token: string, pinyin: readonly string[]): HTMLElement {
  if (pinyin.length === 0) return el('span', 'candidate-token', token);
  const ruby = el('ruby', 'candidate-token', token);
  const rt = el('rt', 'candidate-pinyin', pinyin[0]);
  ruby.append(rt);
  ruby.title = pinyin.join(' / ');
  return ruby;
}

export function renderMaskResults(
  container: HTMLElement,
  result: ShownResult,
  pressed: (maskIndex: number) => number,
  onChoose: (maskIndex: number, candidateIndex: number) => void,
): void {
  const cards = result.masks.map((mask, maskIndex) => {
    const card = el('section', 'card mask-card');
    card.dataset.testid = 'mask-result';
    const titleId = `mask-title-${maskIndex}`;
    card.setAttribute('aria-labelledby', titleId);
    const title = el('h3', 'mask-title');
    title.id = titleId;
    title.append(
      el('span', '', result.masks.length > 1 ? `第 ${maskIndex + 1} 处` : '候选'),
      maskContext(result, maskIndex),
    );
    if (mask.constraint) {
      const sound =
        mask.constraint === '平' || mask.constraint === '仄' ? `${mask.constraint}声` : `读 ${mask.constraint}`;
      const badge = el('span', 'mask-constraint', sound);
      badge.dataset.testid = 'mask-constraint';
      badge.title = '只列出符合这个读音要求的字，概率在这些字之间重新归一';
      title.append(badge);
    }

    const list = el('ul', mask.unfiltered ? 'candidates unfiltered' : 'candidates');
    if (mask.unfiltered) {
      const note = el(
        'li',
        'candidates-note',
        `没有候选符合当前的筛选条件（最低概率、候选范围）。下面灰色的是不经筛选的前 ${mask.candidates.length} 个，仍可点选；可在“选项”里放宽条件。`,
      );
      note.dataset.testid = 'candidates-note';
      list.append(note);
    }
    mask.candidates.forEach((candidate, candidateIndex) => {
      const button = el('button', 'candidate');
      button.type = 'button';
      button.dataset.testid = 'candidate';
      button.dataset.token = candidate.token;
      button.setAttribute('aria-pressed', String(pressed(maskIndex) === candidateIndex));
      const reading = candidate.pinyin?.[0];
      button.setAttribute(
        'aria-label',
        `${candidate.token}${reading ? `（${reading}）` : ''}，概率 ${formatPercent(candidate.score)}${mask.unfiltered ? '（不符合筛选条件）' : ''}，点击填入`,
      );
      button.append(
        tokenWithReading(candidate.token, candidate.pinyin ?? []),
        bar(candidate.score),
        el('span', 'candidate-score', formatPercent(candidate.score)),
      );
      button.addEventListener('click', () => onChoose(maskIndex, candidateIndex));
      const item = el('li', '');
      item.append(button);
      if (candidate.source) item.append(sourceLine(candidate.source));
      list.append(item);
    });
    if (mask.candidates.length === 0) {
      const note = el('li', 'candidates-note', '模型没有给出候选。');
      note.dataset.testid = 'candidates-note';
      list.append(note);
    }
    if (mask.other > 0.0005) {
      const other = el('li', 'other');
      other.setAttribute('aria-label', `其他候选合计 ${formatPercent(mask.other)}`);
      other.append(
        el('span', 'other-label', '其他'),
        bar(mask.other),
        el('span', 'other-score', formatPercent(mask.other)),
      );
      list.append(other);
    }
    card.append(title, list);
    return card;
  });
  container.replaceChildren(...cards);
}

/** Renders the filled sentence, the filled tokens highlighted. */
export function renderFilled(target: HTMLElement, filled: Filled): void {
  target.replaceChildren(
    ...filled.parts.map((part) => {
      if (part.maskIndex === undefined) return document.createTextNode(part.text);
      const mark = el('mark', 'filled-token', part.text);
      return mark;
    }),
  );
}
