// The evaluation and tuning cases, built the same way for both so that they differ only in the
// split they read: "val" (tested on by scripts/evaluate-model) or "dev" (tuned on by
// scripts/tune-fusion; never tested on). Famous texts, which the memory holds on purpose, are split
// by text: even-numbered texts for tuning, odd-numbered ones for the recall suite.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataPath } from './data-paths.mjs';
import { famousSentences, maskOneChar, splitLines } from './fill-eval.mjs';
import { mulberry32 } from './prng.mjs';

const HAN = /\p{Script=Han}/u;
export const HELD_OUT_SOURCES = ['poetry', 'novels', 'tatoeba', 'wiki'];

/** Four-character idioms of the dictionary whose corpus line ("成语：解释") is in `split`. */
export function idiomsOfSplit(corpusDir, split) {
  const csv = dataPath('idioms/idioms.csv');
  const lines = join(corpusDir, split, 'idioms.txt');
  if (!existsSync(csv) || !existsSync(lines)) return [];
  const inSplit = new Set(
    readFileSync(lines, 'utf8')
      .split('\n')
      .map((l) => l.split('：')[0].trim())
      .filter(Boolean),
  );
  const idioms = new Set();
  for (const line of readFileSync(csv, 'utf8').split('\n').slice(1)) {
    const idiom = line.split(',')[0].replace(/"/g, '').trim();
    if ([...idiom].length === 4 && [...idiom].every((c) => HAN.test(c)) && inSplit.has(idiom)) idioms.add(idiom);
  }
  return [...idioms].sort();
}

/**
 * Suites of { text, answer } cases (one [MASK] each) for a split.
 * @returns {Record<string, {cases: {text: string, answer: string}[], memorised?: boolean}>}
 */
export function buildSuites(corpusDir, split, perSource, seed = 7) {
  const random = mulberry32(seed);
  const suites = {};
  for (const source of HELD_OUT_SOURCES) {
    const lines = splitLines(join(corpusDir, split, `${source}.txt`), perSource);
    if (lines.length)
      suites[`held-out ${source}`] = { cases: lines.map((l) => maskOneChar(l, random)).filter(Boolean) };
  }
  const idioms = idiomsOfSplit(corpusDir, split);
  if (idioms.length) {
    suites['idiom cloze'] = { cases: idioms.slice(0, perSource).map((idiom, i) => maskOneChar(idiom, random, i % 4)) };
  }
  const famousPath = dataPath('famous/famous.jsonl');
  if (existsSync(famousPath)) {
    const parity = split === 'dev' ? 0 : 1;
    const sentences = famousSentences(famousPath).filter((s) => s.textIndex % 2 === parity);
    const picked = [];
    for (
      let i = 0;
      i < sentences.length && picked.length < perSource;
      i += Math.max(1, Math.floor(sentences.length / perSource))
    ) {
      picked.push(maskOneChar(sentences[i].sentence, random));
    }
    suites['famous-line recall'] = { cases: picked.filter(Boolean), memorised: true };
  }
  return suites;
}
