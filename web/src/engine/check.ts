/**
 * The spelling check (纠错): which characters of a text are likely wrong, and what they should be.
 *
 * Method (measured in docs/spelling-check.md, tuned on a dev error set by scripts/tune-check):
 *   1. every one-character token of the text with confusions (core: ConfusionSets — the same
 *      syllable in any tone, one fuzzy-pinyin swap, a similar picture) is a position to check;
 *   2. one run over the text as it is, with every such position as an output row, gives each a
 *      suspicion: how far its best candidate's logit is above the original's while the model
 *      still sees the original. Positions above the prefilter (model.json "check.prefilter",
 *      tuned to keep nearly every flag the full method raises) go on, at most the masking budget's
 *      most suspicious (`masked_share` of the checkable positions, at least `masked_min`: a typed
 *      sentence has one or two errors, and they rank high); the others are taken as right, and
 *      skipping them is most of the check's speed;
 *   3. each remaining position is masked in its own copy of the text, and the copies are scored
 *      in batched model runs (session.ts: variants) — masked, so the model judges the position
 *      from its context alone;
 *   4. each row is decoded by the core with the memory fused (the same scoring as fill), restricted
 *      to the original, its confusions and the model's best few characters (kind "context"): the
 *      gain of a candidate is ln P(candidate) − ln P(original) in that fused distribution;
 *   5. a position is flagged when its best gain, less its kind's penalty, passes the threshold the
 *      sensitivity sets; of two flags within `suppressWithin` tokens only the stronger stays (an
 *      error makes its neighbours look odd too).
 * Steps 1–4 depend only on the text (and the masking rule) and are cached; 5 is cheap and runs per call.
 */
import type { WasmConfusionSets, WasmDecoder } from '../core/core-module.js';
import type { ModelCheckRule } from '../types.js';
import { decodeLogits } from './decoding.js';
import type { MaskedLogits, VariantLogits } from './explain.js';

/** How a suggestion relates to the original. */
export type CorrectionKind = 'sound' | 'shape' | 'context';

const KIND_OF_CODE: Record<number, CorrectionKind | 'near-sound'> = { 1: 'sound', 2: 'near-sound', 3: 'shape' };

/** A candidate at one position: its token id, how it is confused with the original, its gain. */
export interface ScoredCandidate {
  id: number;
  kind: CorrectionKind | 'near-sound';
  /** ln P(candidate) − ln P(original), fused distribution at the masked position. */
  gain: number;
}

/** The scoring of one checked position (cached per text). */
export interface ScoredPosition {
  /** Index into the encoded ids. */
  position: number;
  /** Step 2: the best candidate's logit less the original's, the original in place (model alone). */
  suspicion: number;
  /** Best candidates first (at most MAX_KEPT_PER_KIND of each kind); empty when the prefilter passed the position. */
  candidates: ScoredCandidate[];
}

/** The decision rule's parameters (defaults tuned on the dev error set: docs/spelling-check.md). */
export interface CheckRule {
  /** Positions whose suspicion is at most this are not scored masked (never flagged). */
  prefilter: number;
  /** A flag needs gain − penalty(kind) > threshold (natural log). */
  threshold: number;
  penalty: Record<ScoredCandidate['kind'], number>;
  /** Flags closer than this (in tokens) compete: only the stronger stays. */
  suppressWithin: number;
  /** The masking budget: at most max(maskedMin, ceil(maskedShare × checkable)) positions are scored masked. */
  maskedShare: number;
  maskedMin: number;
}

/** What decides which positions are scored masked (part of the cached scoring's key). */
export type MaskingRule = Pick<CheckRule, 'prefilter' | 'maskedShare' | 'maskedMin'>;

/** Every position scored masked (tuning scores this once and applies any rule to it). */
export const MASK_ALL: MaskingRule = { prefilter: -Infinity, maskedShare: 1, maskedMin: 0 };

/**
 * Which of the checkable positions (their suspicions, in text order) are scored masked: those
 * above the prefilter, at most the budget's most suspicious (ties: the earlier position), as a set
 * of indices into `suspicions`.
 */
export function maskedSelection(suspicions: readonly number[], rule: MaskingRule): Set<number> {
  const budget = Math.max(rule.maskedMin, Math.ceil(rule.maskedShare * suspicions.length));
  const above = suspicions.flatMap((suspicion, index) => (suspicion > rule.prefilter ? [index] : []));
  if (above.length <= budget) return new Set(above);
  return new Set(above.sort((a, b) => suspicions[b]! - suspicions[a]! || a - b).slice(0, budget));
}

/**
 * The rule of a model without a tuned one (model.json "check"): the default model's, as
 * scripts/tune-check found it on the dev error set (docs/spelling-check.md).
 */
export const DEFAULT_RULE: CheckRule = {
  prefilter: -Infinity,
  threshold: 6,
  penalty: { sound: 0, 'near-sound': 0, shape: 0, context: 8 },
  suppressWithin: 0,
  maskedShare: 1,
  maskedMin: 0,
};

/** A model's rule: its model.json "check" block (checked by manifest.ts), else DEFAULT_RULE. */
export function modelRule(block: ModelCheckRule | undefined): CheckRule {
  if (!block) return DEFAULT_RULE;
  return {
    prefilter: block.prefilter ?? -Infinity,
    threshold: block.threshold,
    penalty: {
      sound: 0,
      'near-sound': block.penalty.near_sound,
      shape: block.penalty.shape,
      context: block.penalty.context ?? Infinity,
    },
    suppressWithin: block.suppress_within,
    maskedShare: block.masked_share ?? 1,
    maskedMin: block.masked_min ?? 0,
  };
}

/** How far one unit of sensitivity moves the threshold (natural log): 0 → +3, 1 → −3. */
const SENSITIVITY_SPAN = 6;

/** The rule for a sensitivity in [0, 1] (0.5: the tuned default; higher flags more). */
export function ruleFor(sensitivity: number, base: CheckRule): CheckRule {
  return { ...base, threshold: base.threshold + (0.5 - sensitivity) * SENSITIVITY_SPAN };
}

/** How many of the model's own best characters join each position's candidates (kind "context"). */
const CONTEXT_CANDIDATES = 5;
/** Candidates of each kind kept per position in the cached scoring. */
const MAX_KEPT_PER_KIND = 3;

/** A character the check looks at: CJK ideographs only (never digits, Latin, punctuation). */
const IDEOGRAPH = /^\p{Script=Han}$/u;

/**
 * The positions of `ids` worth checking, with their confusions: one-character Han tokens that
 * sound or look like others (the keep-list applies after scoring, so the scoring is per text).
 */
export function checkablePositions(
  ids: Int32Array,
  tokens: readonly string[],
  confusions: WasmConfusionSets,
): { position: number; confused: { ids: Int32Array; kinds: Uint8Array } }[] {
  const out: { position: number; confused: { ids: Int32Array; kinds: Uint8Array } }[] = [];
  for (let p = 1; p < ids.length - 1; p++) {
    const token = tokens[ids[p]!] ?? '';
    if (!IDEOGRAPH.test(token)) continue;
    const confused = confusions.of(ids[p]!);
    if (confused.ids.length > 0) out.push({ position: p, confused });
  }
  return out;
}

/**
 * Scores the checkable positions of `ids`: one run over the text as it is (`logits`, every
 * position an output row) for each position's suspicion; then, for the positions `masking`
 * selects (maskedSelection), one masked copy of `ids` each, batched through `variants`, each row decoded
 * by `decoder` (fused with the memory when it has one) over the original, its confusions and the
 * model's best CONTEXT_CANDIDATES eligible tokens at the mask.
 */
export async function scorePositions(
  ids: Int32Array,
  checkable: ReturnType<typeof checkablePositions>,
  maskId: number,
  vocabSize: number,
  runs: { logits: MaskedLogits; variants: VariantLogits },
  decoder: WasmDecoder,
  masking: MaskingRule,
  beforeRun: () => Promise<void> | void,
): Promise<ScoredPosition[]> {
  if (checkable.length === 0) return [];
  await beforeRun();
  const plain = await runs.logits(
    ids,
    Int32Array.from(checkable, ({ position }) => position),
  );
  const scored: ScoredPosition[] = checkable.map(({ position, confused }, index) => {
    const row = plain.subarray(index * vocabSize, (index + 1) * vocabSize);
    const original = row[ids[position]!]!;
    let suspicion = -Infinity;
    for (const id of confused.ids) suspicion = Math.max(suspicion, row[id]! - original);
    for (const id of bestEligible(row, vocabSize, decoder, CONTEXT_CANDIDATES + 1)) {
      if (id !== ids[position]) suspicion = Math.max(suspicion, row[id]! - original);
    }
    return { position, suspicion, candidates: [] };
  });
  const selected = maskedSelection(
    scored.map((s) => s.suspicion),
    masking,
  );
  const suspicious = checkable.filter((_, index) => selected.has(index));
  if (suspicious.length === 0) return scored;
  const batch = suspicious.map(({ position }) => {
    const masked = ids.slice();
    masked[position] = maskId;
    return { ids: masked, positions: Int32Array.of(position) };
  });
  const logits = await runs.variants(batch, beforeRun);
  const allowed = new Uint8Array(vocabSize);
  const byPosition = new Map(scored.map((s) => [s.position, s]));
  suspicious.forEach(({ position, confused }, index) => {
    const row = logits[index]!;
    const original = ids[position]!;
    const kinds = new Map<number, ScoredCandidate['kind']>();
    confused.ids.forEach((id, k) => kinds.set(id, KIND_OF_CODE[confused.kinds[k]!]!));
    for (const id of bestEligible(row, vocabSize, decoder, CONTEXT_CANDIDATES + 1)) {
      if (id !== original && !kinds.has(id)) kinds.set(id, 'context');
    }
    allowed.fill(0);
    allowed[original] = 1;
    for (const id of kinds.keys()) allowed[id] = 1;
    // The decoder returns every admitted token (its top-k covers them: engine.ts, checkDecoder).
    const [decoded] = decodeLogits(decoder, row, 1, vocabSize, batch[index]!.ids, batch[index]!.positions, [allowed]);
    const probability = new Map<number, number>();
    decoded!.ids.forEach((id, k) => probability.set(id, decoded!.probabilities[k]!));
    const base = Math.log(Math.max(probability.get(original) ?? 0, 1e-30));
    // The best few of each kind: kinds pay different penalties, so one kind's weaker candidate
    // can win after them.
    const keptOfKind = new Map<ScoredCandidate['kind'], number>();
    byPosition.get(position)!.candidates = [...kinds]
      .map(([id, kind]) => ({ id, kind, gain: Math.log(Math.max(probability.get(id) ?? 0, 1e-30)) - base }))
      .sort((a, b) => b.gain - a.gain || a.id - b.id)
      .filter(({ kind }) => {
        const kept = keptOfKind.get(kind) ?? 0;
        keptOfKind.set(kind, kept + 1);
        return kept < MAX_KEPT_PER_KIND;
      });
  });
  return scored;
}

/** The `count` highest-logit tokens of a row that the decoder may propose (no specials, ## pieces). */
function bestEligible(row: Float32Array, vocabSize: number, decoder: WasmDecoder, count: number): number[] {
  const best: number[] = [];
  for (let id = 0; id < vocabSize; id++) {
    const value = row[id]!;
    if (best.length === count && value <= row[best[count - 1]!]!) continue;
    if (!decoder.eligible(id)) continue;
    let at = best.length === count ? count - 1 : best.length;
    while (at > 0 && row[best[at - 1]!]! < value) {
      best[at] = best[at - 1]!;
      at--;
    }
    best[at] = id;
  }
  return best.slice(0, count);
}

/** One flagged position: its best candidate's margin over the threshold decides among neighbours. */
export interface Flag {
  position: number;
  /** Candidates that pass the rule, best first (the first is the suggestion). */
  candidates: ScoredCandidate[];
  margin: number;
}

/** Applies the rule to scored positions: flags, with adjacent flags resolved to the strongest. */
export function decide(scored: readonly ScoredPosition[], rule: CheckRule): Flag[] {
  const flags: Flag[] = [];
  const selected = maskedSelection(
    scored.map((s) => s.suspicion),
    rule,
  );
  for (const [index, { position, candidates }] of scored.entries()) {
    if (!selected.has(index)) continue; // as if never scored masked
    const passing = candidates
      .map((c) => ({ c, margin: c.gain - rule.penalty[c.kind] - rule.threshold }))
      .filter((x) => x.margin > 0)
      .sort((a, b) => b.margin - a.margin || a.c.id - b.c.id);
    if (passing.length > 0) flags.push({ position, candidates: passing.map((x) => x.c), margin: passing[0]!.margin });
  }
  // Strongest first; a flag within suppressWithin tokens of a stronger kept one is dropped.
  const kept: Flag[] = [];
  for (const flag of [...flags].sort((a, b) => b.margin - a.margin || a.position - b.position)) {
    if (kept.every((k) => Math.abs(k.position - flag.position) > rule.suppressWithin)) kept.push(flag);
  }
  return kept.sort((a, b) => a.position - b.position);
}

/** The public kind: near-sound confusions are sound errors to a user. */
export function publicKind(kind: ScoredCandidate['kind']): CorrectionKind {
  return kind === 'near-sound' ? 'sound' : kind;
}

/** A gain as a score in (0.5, 1): P(suggestion) / (P(suggestion) + P(original)). */
export function scoreOfGain(gain: number): number {
  return 1 / (1 + Math.exp(-gain));
}
