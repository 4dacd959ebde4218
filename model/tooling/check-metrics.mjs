// @ts-check
// Scores of the spelling check (tk.check) on the cases of model/tooling/check-set.mjs, as
// Chinese spelling check (CSC) evaluations usually report them, at the sentence level:
// - detection: a sentence is detected right when the set of positions the checker flagged is
//   exactly the set of its wrong positions; correction: when moreover every suggestion is the
//   right character. Precision over the sentences where the checker flagged anything, recall
//   over the sentences that have errors, F1 of the two. A correct sentence left alone counts in
//   neither (it is in the false alarm rate and the accuracy).
// - false alarm rate: the share of correct sentences where anything was flagged.
// - accuracy: the share of all sentences handled right (correct ones left alone, wrong ones
//   detected / corrected exactly).
// - character level: flagged positions that are wrong ones (precision) and wrong positions that
//   were flagged (recall); correction likewise with the right suggestion.
// - per kind (sound, near-sound, shape, random) and per source: the share of errors flagged and
//   corrected (character level: a sentence may mix kinds), and per source the false alarm rate.
// A ratio with nothing to count (no sentence flagged, no correct sentence) is 0.

/**
 * @typedef {import('./check-set.mjs').CheckCase} CheckCase
 * @typedef {{ start: number, end: number, original: string, suggestion: string }} Correction
 * @typedef {{ corrections: Correction[] }} CheckResult
 * @typedef {{ precision: number, recall: number, f1: number }} PRF
 * @typedef {{ errors: number, detected: number, corrected: number, detectionRecall: number, correctionRecall: number }} KindScore
 */

/** @param {number} a @param {number} b */
const ratio = (a, b) => (b ? a / b : 0);

/** @param {number} tp @param {number} flagged @param {number} relevant @returns {PRF} */
function prf(tp, flagged, relevant) {
  const precision = ratio(tp, flagged);
  const recall = ratio(tp, relevant);
  return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 };
}

/** @param {number} errors @param {number} detected @param {number} corrected @returns {KindScore} */
function kindScore(errors, detected, corrected) {
  return {
    errors,
    detected,
    corrected,
    detectionRecall: ratio(detected, errors),
    correctionRecall: ratio(corrected, errors),
  };
}

/**
 * Scores `results` (results[i]: what the checker returned for cases[i].text) against `cases`.
 * A correction is matched to an error by its span (start and end); its `original` must be the
 * text at that span (else the checker and the cases disagree about offsets: an Error).
 * @param {CheckCase[]} cases
 * @param {CheckResult[]} results
 */
export function scoreCheck(cases, results) {
  if (results.length !== cases.length) {
    throw new Error(`scoreCheck: ${results.length} results for ${cases.length} cases`);
  }
  const n = { sentences: cases.length, withErrors: 0, correct: 0, flagged: 0, falseAlarms: 0 };
  let detectedSentences = 0;
  let correctedSentences = 0;
  let accurateDetection = 0;
  let accurateCorrection = 0;
  const chars = { errors: 0, flagged: 0, detected: 0, corrected: 0 };
  /** @type {Record<string, [number, number, number]>} */
  const kinds = {};
  /** @type {Record<string, { sentences: number, correct: number, falseAlarms: number, errors: number, detected: number, corrected: number }>} */
  const sources = {};
  cases.forEach((c, i) => {
    /** @param {number} start @param {number} end */
    const key = (start, end) => `${start}:${end}`;
    /** @type {Map<string, Set<string>>} span -> the suggestions made there */
    const flagged = new Map();
    for (const { start, end, original, suggestion } of results[i]?.corrections ?? []) {
      if (c.text.slice(start, end) !== original) {
        throw new Error(
          `scoreCheck: case ${i}: correction ${start}-${end} "${original}" but the text there is "${c.text.slice(start, end)}"`,
        );
      }
      const k = key(start, end);
      const at = flagged.get(k) ?? new Set();
      at.add(suggestion);
      flagged.set(k, at);
    }
    const gold = new Map(c.errors.map((e) => [key(e.start, e.end), e]));
    const src = (sources[c.source] ??= {
      sentences: 0,
      correct: 0,
      falseAlarms: 0,
      errors: 0,
      detected: 0,
      corrected: 0,
    });
    src.sentences++;
    if (flagged.size) n.flagged++;
    if (!gold.size) {
      n.correct++;
      src.correct++;
      if (flagged.size) {
        n.falseAlarms++;
        src.falseAlarms++;
      } else {
        accurateDetection++;
        accurateCorrection++;
      }
    } else {
      n.withErrors++;
      const exact = flagged.size === gold.size && [...flagged.keys()].every((k) => gold.has(k));
      const allRight = [...gold].every(([k, e]) => {
        const s = flagged.get(k);
        return s !== undefined && s.size === 1 && s.has(e.right);
      });
      if (exact) {
        detectedSentences++;
        accurateDetection++;
        if (allRight) {
          correctedSentences++;
          accurateCorrection++;
        }
      }
    }
    chars.flagged += flagged.size;
    for (const [k, e] of gold) {
      const s = flagged.get(k);
      const detected = s !== undefined;
      const corrected = detected && s.size === 1 && s.has(e.right);
      chars.errors++;
      src.errors++;
      const kind = (kinds[e.kind] ??= [0, 0, 0]);
      kind[0]++;
      if (detected) {
        chars.detected++;
        src.detected++;
        kind[1]++;
      }
      if (corrected) {
        chars.corrected++;
        src.corrected++;
        kind[2]++;
      }
    }
  });
  return {
    counts: n,
    detection: prf(detectedSentences, n.flagged, n.withErrors),
    correction: prf(correctedSentences, n.flagged, n.withErrors),
    falseAlarmRate: ratio(n.falseAlarms, n.correct),
    accuracy: { detection: ratio(accurateDetection, n.sentences), correction: ratio(accurateCorrection, n.sentences) },
    characters: {
      ...chars,
      detection: prf(chars.detected, chars.flagged, chars.errors),
      correction: prf(chars.corrected, chars.flagged, chars.errors),
    },
    byKind: Object.fromEntries(Object.entries(kinds).map(([k, [e, d, r]]) => [k, kindScore(e, d, r)])),
    bySource: Object.fromEntries(
      Object.entries(sources).map(([s, v]) => [
        s,
        { ...v, falseAlarmRate: ratio(v.falseAlarms, v.correct), ...kindScore(v.errors, v.detected, v.corrected) },
      ]),
    ),
  };
}

/** @param {number} x */
const pct = (x) => `${(100 * x).toFixed(1)}`;

/**
 * A small markdown report of scoreCheck's metrics: the precision/recall/F1 table, the false
 * alarm rate, and recall per error kind and per source.
 * @param {ReturnType<typeof scoreCheck>} m
 */
export function formatCheckReport(m) {
  /** @param {string} name @param {PRF} s */
  const row = (name, s) => `| ${name} | ${pct(s.precision)} | ${pct(s.recall)} | ${pct(s.f1)} |`;
  const lines = [
    `${m.counts.sentences} sentences, ${m.counts.withErrors} with errors (${m.characters.errors} wrong characters), ${m.counts.correct} correct.`,
    '',
    '| % | precision | recall | F1 |',
    '| --- | ---: | ---: | ---: |',
    row('detection (sentence)', m.detection),
    row('correction (sentence)', m.correction),
    row('detection (character)', m.characters.detection),
    row('correction (character)', m.characters.correction),
    '',
    `False alarm rate: ${pct(m.falseAlarmRate)} % (${m.counts.falseAlarms} of ${m.counts.correct} correct sentences flagged). ` +
      `Sentence accuracy: detection ${pct(m.accuracy.detection)} %, correction ${pct(m.accuracy.correction)} %.`,
    '',
    '| error kind | errors | detected % | corrected % |',
    '| --- | ---: | ---: | ---: |',
    ...['sound', 'near-sound', 'shape', 'random']
      .filter((k) => m.byKind[k])
      .map((k) => {
        const s = m.byKind[k];
        return `| ${k} | ${s.errors} | ${pct(s.detectionRecall)} | ${pct(s.correctionRecall)} |`;
      }),
    '',
    '| source | sentences | errors | detected % | corrected % | false alarms % |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...Object.entries(m.bySource).map(
      ([s, v]) =>
        `| ${s} | ${v.sentences} | ${v.errors} | ${pct(v.detectionRecall)} | ${pct(v.correctionRecall)} | ${pct(v.falseAlarmRate)} |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
