// The evaluation and tuning cases, built the same way for both so that they differ only in the
// split they read: "val" (tested on by scripts/evaluate-model) or "dev" (tuned on by
// scripts/tune-fusion; never tested on). Famous texts, which the memory holds on purpose, are split
// by text: even-numbered texts for tuning, odd-numbered ones for the recall suite.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, dataPath } from './data-paths.mjs';
import { famousSentences, maskOneChar, sentencesOf, splitLines, usableCaseText } from './fill-eval.mjs';
import { mulberry32 } from './prng.mjs';

const HAN = /\p{Script=Han}/u;
export const HELD_OUT_SOURCES = ['poetry', 'novels', 'tatoeba', 'wiki', 'written'];
/** The Debian sources of scripts/build-corpus (corpus-modern/), measured as one suite. */
export const MODERN_SOURCES = ['debian-docs', 'libreoffice-help', 'manpages', 'wesnoth'];
/** Obvious everyday sentences written for the project, each with the answers a native speaker accepts. */
export const EVERYDAY_PATH = join(REPO_ROOT, 'model/eval/everyday.jsonl');

/**
 * The everyday cases of a split: the sentences of EVERYDAY_PATH whose hash is even ("dev", tuned on)
 * or odd ("val", tested on), as { text, answer, answers }.
 */
export function everydayCases(split, path = EVERYDAY_PATH) {
  if (!existsSync(path)) return [];
  const parity = split === 'dev' ? 0 : 1;
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line))
    .filter(({ text }) => createHash('sha1').update(text).digest()[0] % 2 === parity)
    .map(({ text, answers }) => ({ text, answer: answers[0], answers }));
}

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
 * Up to `limit` cases from the lines of a small split file, several per line: lines longer than
 * splitLines keeps are cut into sentences first, then each pass masks one more Han character of
 * every sentence (a different one each pass) until `limit` cases or `perLine` passes. Tuning uses
 * it so that a source with few lines (wiki: 22 dev lines, most over 120 characters) still weighs.
 */
function denseCases(path, limit, perLine, random) {
  if (!existsSync(path)) return [];
  const sentences = readFileSync(path, 'utf8')
    .split('\n')
    .flatMap((line) => sentencesOf(line.trim()))
    .filter(usableCaseText);
  const positions = sentences.map((l) => {
    const han = [...l].flatMap((c, i) => (HAN.test(c) ? [i] : []));
    for (let i = han.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [han[i], han[j]] = [han[j], han[i]];
    }
    return han;
  });
  const cases = [];
  for (let pass = 0; pass < perLine; pass++) {
    for (let i = 0; i < sentences.length && cases.length < limit; i++) {
      if (pass < positions[i].length) cases.push(maskOneChar(sentences[i], random, positions[i][pass]));
    }
  }
  return cases;
}

/**
 * Suites of { text, answer, answers? } cases (one [MASK] each; `answers`, when given, lists every
 * accepted answer) for a split. `casesPerLine` > 1 (tuning only)
 * fills a held-out source that has fewer than `perSource` lines with more cases per line (denseCases);
 * the default is one case per line, as scripts/evaluate-model measures.
 * @returns {Record<string, {cases: {text: string, answer: string}[], memorised?: boolean}>}
 */
export function buildSuites(corpusDir, split, perSource, seed = 7, { casesPerLine = 1 } = {}) {
  const random = mulberry32(seed);
  const suites = {};
  for (const source of HELD_OUT_SOURCES) {
    const path = join(corpusDir, split, `${source}.txt`);
    const lines = splitLines(path, perSource);
    if (casesPerLine > 1 && lines.length < perSource) {
      const cases = denseCases(path, perSource, casesPerLine, random);
      if (cases.length) suites[`held-out ${source}`] = { cases };
    } else if (lines.length)
      suites[`held-out ${source}`] = { cases: lines.map((l) => maskOneChar(l, random)).filter(Boolean) };
  }
  const modern = MODERN_SOURCES.flatMap((source) =>
    splitLines(join(corpusDir, split, `${source}.txt`), Math.ceil(perSource / MODERN_SOURCES.length)),
  );
  if (modern.length) suites['held-out modern'] = { cases: modern.map((l) => maskOneChar(l, random)).filter(Boolean) };
  const everyday = everydayCases(split);
  if (everyday.length) suites.everyday = { cases: everyday };
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
