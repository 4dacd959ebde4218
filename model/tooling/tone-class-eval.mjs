// Blanks constrained by tone class on held-out poetry (issue "Pinyin in the core"): each case's
// blank is filled as the product fills it (the built package, memory fused), once plainly and once
// as [MASK:平] or [MASK:仄] — the class of the hidden character — and both top-1/top-5 are counted,
// with a check that every shown candidate of a constrained blank has a reading of that class.
// A character whose readings fall in both classes (a polyphone such as 长 cháng / zhǎng) or in
// neither (no reading, or only the neutral tone) gives no class to state: such cases are skipped
// and counted.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './data-paths.mjs';

const DIST = join(REPO_ROOT, 'dist');

/** 1 平 (tones 1-2), 2 仄 (tones 3-4), 0 neither (中华新韵). */
const classOf = (tone) => (tone === 1 || tone === 2 ? 1 : tone === 3 || tone === 4 ? 2 : 0);

/**
 * Measures `cases` ({ text with one [MASK], answer }) on the model in `modelDir`.
 * @param {string} modelDir
 * @param {{ text: string, answer: string }[]} cases
 * @returns {Promise<{ cases: number, skipped: { polyphone: number, noClass: number },
 *   plain: { top1: number, top5: number }, constrained: { top1: number, top5: number },
 *   violations: number, byClass: Record<string, number> }>}
 */
export async function evaluateToneClass(modelDir, cases) {
  const { createFillMask } = await import(pathToFileURL(join(DIST, 'index.js')).href);
  const { loadCore } = await import(pathToFileURL(join(DIST, 'core', 'load-core.js')).href);
  const core = await loadCore();
  const tk = await createFillMask({ model: modelDir, backend: 'auto', threads: 1 });
  const classes = (text) =>
    new Set(core.module.readingsOf(text, false, undefined).flatMap((c) => Array.from(c.tones, classOf)));
  const hits = { plain: [0, 0], constrained: [0, 0] };
  const skipped = { polyphone: 0, noClass: 0 };
  const byClass = { 平: 0, 仄: 0 };
  let measured = 0;
  let violations = 0;
  try {
    for (const { text, answer } of cases) {
      const found = classes(answer);
      found.delete(0);
      if (found.size === 0) {
        skipped.noClass++;
        continue;
      }
      if (found.size > 1) {
        skipped.polyphone++;
        continue;
      }
      const mark = found.has(1) ? '平' : '仄';
      byClass[mark]++;
      measured++;
      const plain = (await tk.fill(text, { topK: 5 })).masks[0].candidates.map((c) => c.token);
      const shown = (await tk.fill(text.replace('[MASK]', `[MASK:${mark}]`), { topK: 5 })).masks[0].candidates;
      const constrained = shown.map((c) => c.token);
      for (const token of constrained) if (!classes(token).has(found.has(1) ? 1 : 2)) violations++;
      hits.plain[0] += plain[0] === answer ? 1 : 0;
      hits.plain[1] += plain.includes(answer) ? 1 : 0;
      hits.constrained[0] += constrained[0] === answer ? 1 : 0;
      hits.constrained[1] += constrained.includes(answer) ? 1 : 0;
    }
  } finally {
    await tk.dispose();
    core.dispose();
  }
  const rate = ([top1, top5]) => ({ top1: top1 / Math.max(1, measured), top5: top5 / Math.max(1, measured) });
  return {
    cases: measured,
    skipped,
    plain: rate(hits.plain),
    constrained: rate(hits.constrained),
    violations,
    byClass,
  };
}
