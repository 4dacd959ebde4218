// The spelling check, tk.check (web/src/engine/check.ts), against an independent reference:
// onnxruntime-node's log-probabilities at each masked character (tests/runtime/fixtures.ts:
// Reference, the head computed in float64 from head.bin), candidates built here from an
// independent Python parse of Unihan (sound: a shared syllable among the two likeliest readings;
// near-sound: one fuzzy swap), the generated shape table's source (shape) and the reference's own
// top 5 (context), the prefilter and the decision rule as web/src/engine/check.ts states them. Then the API's
// contract: empty text, keep-list, sensitivity, options, cancellation, cache, offsets, CLI.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseShapeTable } from '../../model/tooling/check-set.mjs';
import type { CheckResult, FillMaskModel } from '../../web/src/index.js';
import { unihanReadings } from '../harness/unihan-reference.mjs';
import { cli } from './cli-run.js';
import { Reference, api, missingPrerequisite, rejection, repoRoot } from './fixtures.js';

const missing = missingPrerequisite();
const DEFAULT_MODEL = join(repoRoot, 'model', 'default');
const HAN = /^\p{Script=Han}$/u;

/** The rule of web/src/engine/check.ts, read from model.json as the runtime reads it. */
function ruleOf(modelDir: string, sensitivity: number) {
  const block = JSON.parse(readFileSync(join(modelDir, 'model.json'), 'utf8')).check;
  expect(block, 'model.json has a tuned check rule (scripts/tune-check)').toBeDefined();
  return {
    prefilter: (block.prefilter ?? -Infinity) as number,
    threshold: block.threshold + (0.5 - sensitivity) * 6,
    penalty: {
      sound: 0,
      'near-sound': block.penalty.near_sound,
      shape: block.penalty.shape,
      context: block.penalty.context ?? Infinity,
    } as Record<string, number>,
    suppressWithin: block.suppress_within as number,
    maskedShare: (block.masked_share ?? 1) as number,
    maskedMin: (block.masked_min ?? 0) as number,
  };
}

/** One fuzzy-pinyin swap of a toneless syllable (z/zh, c/ch, s/sh, n/l; an/ang, en/eng, in/ing). */
function fuzzy(syllable: string): string[] {
  const out: string[] = [];
  const initial = /^(zh|ch|sh|z|c|s|n|l)(.*)$/.exec(syllable);
  if (initial) {
    const swap: Record<string, string> = { zh: 'z', ch: 'c', sh: 's', z: 'zh', c: 'ch', s: 'sh', n: 'l', l: 'n' };
    out.push(swap[initial[1]!]! + initial[2]);
  }
  const final = /(ang|eng|ing|an|en|in)$/.exec(syllable);
  if (final) {
    const swap: Record<string, string> = { ang: 'an', eng: 'en', ing: 'in', an: 'ang', en: 'eng', in: 'ing' };
    out.push(syllable.slice(0, final.index) + swap[final[1]!]);
  }
  return out;
}

interface Expected {
  start: number;
  end: number;
  suggestion: string;
  kind: string;
  gain: number;
  margin: number;
}

/** What check should flag in `text`, computed from the reference alone. */
async function referenceCheck(ref: Reference, vocabSize: number, text: string, rule: ReturnType<typeof ruleOf>) {
  const readings = unihanReadings();
  const shapes = parseShapeTable();
  const syllables = (c: string) => (readings.get(c) ?? []).slice(0, 2).map((r) => r.slice(0, -1));
  const { tokens, ids, offsets } = await ref.encodeFull(text);
  const flags: (Expected & { position: number })[] = [];
  const borderline = new Set<number>(); // start offsets of positions a rounding could flip
  // Pass 1: each checkable position's candidates and suspicion.
  const checkable: { p: number; kinds: Map<number, string>; suspicion: number }[] = [];
  for (let p = 1; p < ids.length - 1; p++) {
    const original = tokens[p]!;
    if (!HAN.test(original)) continue;
    const own = syllables(original);
    const near = new Set(own.flatMap(fuzzy));
    const look = new Set((shapes.get(original) ?? []).map((s) => s.char));
    const kinds = new Map<number, string>();
    for (let id = 0; id < vocabSize; id++) {
      const token = ref.token(id);
      if (id === ids[p] || [...token].length !== 1 || !ref.eligible(id)) continue;
      const theirs = syllables(token);
      if (theirs.some((s) => own.includes(s))) kinds.set(id, 'sound');
      else if (theirs.some((s) => near.has(s))) kinds.set(id, 'near-sound');
      else if (look.has(token)) kinds.set(id, 'shape');
    }
    if (kinds.size === 0) continue; // nothing sounds or looks like it: not checked
    // The prefilter: the best candidate's logit less the original's with the original in place.
    const [plain] = await ref.logSoftmaxRows(ids, [p]);
    const contextPlain = ref.topK(plain!, 6).map((c) => c.id);
    const suspicion = Math.max(
      ...[...kinds.keys(), ...contextPlain].filter((id) => id !== ids[p]).map((id) => plain![id]! - plain![ids[p]!]!),
    );
    if (Math.abs(suspicion - rule.prefilter) < 0.02) borderline.add(offsets[p]![0]);
    checkable.push({ p, kinds, suspicion });
  }
  // The masking budget: of those above the prefilter, the most suspicious (ties: the earlier).
  const budget = Math.max(rule.maskedMin, Math.ceil(rule.maskedShare * checkable.length));
  const ranked = checkable
    .filter((c) => c.suspicion > rule.prefilter)
    .sort((a, b) => b.suspicion - a.suspicion || a.p - b.p);
  const cut = ranked[budget - 1]?.suspicion;
  if (ranked.length > budget && cut !== undefined) {
    for (const c of ranked) if (Math.abs(c.suspicion - cut) < 0.02) borderline.add(offsets[c.p]![0]);
  }
  // Pass 2: the selected positions, masked.
  for (const { p, kinds } of ranked.slice(0, budget).sort((a, b) => a.p - b.p)) {
    const masked = ids.slice();
    masked[p] = ref.maskTokenId;
    const [row] = await ref.logSoftmaxRows(masked, [p]);
    for (const { id } of ref.topK(row!, 6)) if (id !== ids[p] && !kinds.has(id)) kinds.set(id, 'context');
    let best: Expected | null = null;
    for (const [id, kind] of kinds) {
      const gain = row![id]! - row![ids[p]!]!;
      const margin = gain - rule.penalty[kind]! - rule.threshold;
      if (Math.abs(margin) < 0.02) borderline.add(offsets[p]![0]);
      if (margin > 0 && (!best || margin > best.margin)) {
        best = { start: offsets[p]![0], end: offsets[p]![1], suggestion: ref.token(id), kind, gain, margin };
      }
    }
    if (best) flags.push({ ...best, position: p });
  }
  const kept: typeof flags = [];
  for (const flag of [...flags].sort((a, b) => b.margin - a.margin)) {
    if (kept.every((k) => Math.abs(k.position - flag.position) > rule.suppressWithin)) kept.push(flag);
  }
  return { flags: kept.sort((a, b) => a.position - b.position), borderline };
}

const kindOf = (kind: string) => (kind === 'near-sound' ? 'sound' : kind);

describe.skipIf(missing !== null)('check with the default model', () => {
  let ref: Reference;
  let native: FillMaskModel;
  let vocabSize: number;

  beforeAll(async () => {
    const { createFillMask } = await api();
    ref = await Reference.create(DEFAULT_MODEL);
    native = await createFillMask({ model: DEFAULT_MODEL, memory: false, threads: 1 });
    vocabSize = native.stats().model.vocabSize;
  }, 120_000);
  afterAll(() => native?.dispose());

  test.each([
    ['我门再接再励，以经快完成了', 1],
    ['他的成绩一直名列前矛，这件事情我已经知到了。', 1],
    ['今天天汽很好，我们去公园玩吧。', 0.5],
    ['快递员把包裹放在门口了。', 1],
  ])('%s (sensitivity %s): the flags, suggestions, kinds and scores of the reference', async (text, sensitivity) => {
    const rule = ruleOf(DEFAULT_MODEL, sensitivity);
    const expected = await referenceCheck(ref, vocabSize, text, rule);
    const result = await native.check(text, { sensitivity });
    const near = (start: number) => expected.borderline.has(start);
    const got = result.corrections.filter((c) => !near(c.start));
    expect(
      got.map((c) => [c.start, c.end, c.suggestion, c.kind]),
      JSON.stringify(expected.flags),
    ).toEqual(expected.flags.filter((f) => !near(f.start)).map((f) => [f.start, f.end, f.suggestion, kindOf(f.kind)]));
    for (const c of got) {
      const f = expected.flags.find((x) => x.start === c.start)!;
      expect(c.score).toBeCloseTo(1 / (1 + Math.exp(-f.gain)), 3);
      expect(c.original).toBe(text.slice(c.start, c.end));
      expect(c.candidates[0]!.token).toBe(c.suggestion);
      expect(c.candidates[0]!.pinyin.length).toBeGreaterThan(0);
    }
    expect(result.corrected).toBe(
      result.corrections.reduceRight((t, c) => t.slice(0, c.start) + c.suggestion + t.slice(c.end), text),
    );
  });

  test('the everyday examples are corrected (model alone, sensitivity 1)', async () => {
    const result = await native.check('我门再接再励，以经快完成了', { sensitivity: 1 });
    expect(result.corrected).toMatch(/^我们/);
    expect(result.corrected).toContain('已');
  });

  test('an empty or blank text has nothing to check and runs nothing', async () => {
    for (const text of ['', '   ', '\n']) {
      const result = await native.check(text);
      expect(result).toMatchObject({ text, corrected: text, corrections: [], checked: 0 });
      expect(result.timings.runs).toBe(0);
    }
  });

  test('digits, Latin text and punctuation are never checked; offsets are UTF-16 around astral characters', async () => {
    const text = '𠀀abc 123，我门';
    const result = await native.check(text, { sensitivity: 1 });
    expect(result.checked).toBe(2); // 我, 门 (𠀀 is [UNK] for this vocabulary)
    for (const c of result.corrections) {
      expect(text.slice(c.start, c.end)).toBe(c.original);
      expect(HAN.test(c.original)).toBe(true);
    }
  });

  test('keep-list: every occurrence of a kept word or character is left alone', async () => {
    const text = '我门再接再励，以经快完成了';
    const all = await native.check(text, { sensitivity: 1 });
    expect(all.corrections.some((c) => c.original === '门')).toBe(true);
    const kept = await native.check(text, { sensitivity: 1, keep: ['我门', '以'] });
    expect(kept.corrections.some((c) => c.original === '门' || c.original === '以')).toBe(false);
    expect(kept.cached).toBe(true); // the scoring is per text: only the rule changed
  });

  test('higher sensitivity flags a superset', async () => {
    const text = '他的成绩一直名列前矛，这件事情我已经知到了。';
    const spans = async (sensitivity: number) =>
      (await native.check(text, { sensitivity })).corrections.map((c) => c.start);
    const low = await spans(0);
    const high = await spans(1);
    for (const start of low) expect(high).toContain(start);
    expect(high.length).toBeGreaterThanOrEqual(low.length);
  });

  test('bad options and inputs reject clearly, before anything runs', async () => {
    const runs = native.stats().runs;
    const cases: [unknown, unknown, RegExp][] = [
      ['我门', { sensitivity: 2 }, /sensitivity must be a number from 0 to 1/],
      ['我门', { sensitivity: '0.5' }, /sensitivity must be a number from 0 to 1/],
      ['我门', { keep: '我门' }, /keep must be an array/],
      ['我门', { keep: [''] }, /keep\[0\] must be a non-empty string/],
      ['我门', { keep: [3] }, /keep\[0\] must be a non-empty string/],
      ['我门', { sensitvity: 1 }, /did you mean sensitivity/],
      ['我门', { memory: 'no' }, /memory must be/],
      [42, {}, /text must be a string/],
    ];
    for (const [text, options, message] of cases) {
      const error = await rejection(native.check(text as string, options as object));
      expect(error.code).toBe('BAD_OPTION');
      expect(error.message).toMatch(message);
    }
    expect(native.stats().runs).toBe(runs);
    const long = await rejection(native.check('我'.repeat(600)));
    expect(long.code).toBe('TOO_LONG');
    const controller = new AbortController();
    controller.abort();
    expect((await rejection(native.check('我门再接再励', { signal: controller.signal }))).code).toBe('ABORTED');
  });

  test('a second check of the same text comes from the cache', async () => {
    const text = '这件事情我已经知到了';
    const first = await native.check(text);
    const second = await native.check(text);
    expect(second.cached).toBe(true);
    expect(second.timings.runs).toBe(0);
    expect(second.corrections).toEqual(first.corrections);
  });
});

describe.skipIf(missing !== null)('check on the wasm backend and in the CLI', () => {
  test('wasm gives the corrections onnxruntime-node gives', async () => {
    const { createFillMask } = await api();
    const [native, wasm] = await Promise.all([
      createFillMask({ model: DEFAULT_MODEL, threads: 1 }),
      createFillMask({ model: DEFAULT_MODEL, backend: 'wasm', threads: 2 }),
    ]);
    try {
      const text = '我门再接再励，以经快完成了，他的成绩一直名列前矛。';
      const strip = (r: CheckResult) => r.corrections.map((c) => [c.start, c.suggestion, c.kind]);
      expect(strip(await wasm.check(text, { sensitivity: 1 }))).toEqual(
        strip(await native.check(text, { sensitivity: 1 })),
      );
    } finally {
      await Promise.all([native.dispose(), wasm.dispose()]);
    }
  }, 120_000);

  test('tiankong check: a readable diff, --json, usage errors', async () => {
    const text = await cli(['check', '--sensitivity', '1', '我门再接再励，以经快完成了']);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('我[门→们]');
    expect(text.stdout).toMatch(/→ 我们/);
    const json = await cli(['check', '--json', '--sensitivity', '1'], '我门再接再励\n今天天气很好\n');
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[0].corrected).toContain('我们');
    expect(lines[1].corrections).toEqual([]);
    const bad = await cli(['check', '--sensitivity', '7', 'x']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--sensitivity must be a number from 0 to 1');
    const misplaced = await cli(['check', '-k', '3', 'x']);
    expect(misplaced.status).toBe(2);
    expect(misplaced.stderr).toContain('--top-k is an option of tiankong fill');
  }, 120_000);
});
