// @ts-check
// The evaluation set of the spelling check (纠错, tk.check): sentences of a corpus split
// (.cache/corpus/<split>/<source>.txt, scripts/build-corpus), half left as they are, half with one
// wrong character (sometimes two) put in the way people make them. scripts/build-check-set writes
// .cache/check/dev.jsonl (from "dev": tune on it) and .cache/check/test.jsonl (from "val", the
// held-out split of scripts/evaluate-model: report on it). Built here from the project's own
// data; no published spelling-correction test set (SIGHAN and the like) is used.
//
// A case: { source, text, correct, errors: [{ start, end, wrong, right, kind }] }; text is what
// the checker reads, correct the original; start/end are UTF-16 offsets (the same in both, since
// a substitution keeps the length: text.slice(start, end) === wrong, correct.slice(start, end)
// === right); no errors: text === correct.
//
// Error kinds (the share of errors drawn of each, KIND_WEIGHTS):
// - sound (55 %): a character of the same syllable, any tone — what a pinyin IME user picks by
//   mistake. The replacement is drawn weighted by how common it is (an IME lists the common
//   homophones first) times the share of that syllable among its readings; a character counts
//   with its one or two likeliest readings only (soundsOf: by Unihan's counts where it has them):
//   的 is also read dí, dì, but an IME user typing "de" never gets 第.
// - near-sound (15 %): a syllable one fuzzy sound away (z/zh, c/ch, s/sh, n/l; an/ang, en/eng,
//   in/ing — the confusions of southern speakers), same or other tone, weighted by frequency;
//   never a character that also shares a syllable with the right one.
// - shape (20 %): a neighbour in the table of visually similar characters (wasm/src/shape_table.cc,
//   scripts/gen-shape-table), weighted by its similarity score; never one that shares a syllable
//   (those count as sound). The checker (tk.check) takes its look-alike candidates from the same
//   table, so its shape results here are optimistic: every wrong character is one it considers.
// - random (10 %): a common character (the RANDOM_POOL most frequent, uniformly) unrelated to the
//   right one by sound or shape.
// Replacements are always among the COMMON_COUNT most frequent characters of the training text's
// modern sources (counted in .cache/corpus/train.txt, at most FREQUENCY_BYTES of it), within the
// 8 105 of the 通用规范汉字表 (the shape table's set). Readings: Unihan via
// tests/harness/unihan-reference.mjs (an independent parse of Debian's unicode-data), ranked by the
// kHanyuPinlu counts and kTGHZ2013 readings of the same file.
//
// Caveat: a substitution can happen to give another correct sentence (the checker cannot know
// 在/再 in every context); 他/她/它 are never swapped for one another, as a sentence rarely
// shows which is meant.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { UNIHAN, unihanReadings } from '../../tests/harness/unihan-reference.mjs';
import { REPO_ROOT } from './data-paths.mjs';
import { mulberry32 } from './prng.mjs';

/**
 * @typedef {'sound' | 'near-sound' | 'shape' | 'random'} ErrorKind
 * @typedef {{ start: number, end: number, wrong: string, right: string, kind: ErrorKind }} CheckError
 * @typedef {{ source: string, text: string, correct: string, errors: CheckError[] }} CheckCase
 */

/**
 * The sources of the set: text people write today. Poetry (classical verse) and idioms (成语 and
 * their classical glosses) are left out: a wrong character there is a question of literary
 * knowledge, not of typing, and the frequency of the characters they use is not that of everyday
 * text. Novels (the classical vernacular novels of the corpus, 三国演义-style 白话) stay, as
 * long everyday narrative, one source among eight.
 */
export const CHECK_SOURCES = [
  'written',
  'tatoeba',
  'novels',
  'wiki',
  'libreoffice-help',
  'debian-docs',
  'manpages',
  'wesnoth',
];
/** @type {Record<ErrorKind, number>} */
export const KIND_WEIGHTS = { sound: 0.55, 'near-sound': 0.15, shape: 0.2, random: 0.1 };
/** @type {ErrorKind[]} */
export const KINDS = ['sound', 'near-sound', 'shape', 'random'];
export const MIN_LENGTH = 8; // code points of a sentence ...
export const MAX_LENGTH = 60; // ... inclusive
/** Share of sentences with errors that get two (at least TWO_ERRORS_MIN_HAN Chinese characters). */
export const TWO_ERRORS_SHARE = 0.2;
const TWO_ERRORS_MIN_HAN = 10;
/** Replacement characters: the most frequent this many of modern text. */
export const COMMON_COUNT = 4000;
/** Random replacements: uniformly among this many most frequent (the size of the 常用字 list). */
export const RANDOM_POOL = 2500;
/** Characters are counted in at most this many bytes of train.txt (spread over CHECK_SOURCES). */
export const FREQUENCY_BYTES = 20 << 20;
/** Groups whose members are never put for one another (context rarely tells them apart). */
const INTERCHANGEABLE = ['他她它'];
export const SHAPE_TABLE_PATH = join(REPO_ROOT, 'wasm/src/shape_table.cc');

const HAN = /^\p{Script=Han}$/u;
const HAN_ALL = /\p{Script=Han}/gu;

/** Toneless syllable of a numbered reading: "shang4" -> "shang". @param {string} reading */
export function syllable(reading) {
  return reading.replace(/[1-5]$/, '');
}

/** Toneless syllable of a tone-marked reading as Unihan spells it: "zhǎng" -> "zhang", "lǜ" -> "lü". @param {string} reading */
function unmarked(reading) {
  return reading
    .normalize('NFD')
    .replace(/[\u0300\u0301\u0304\u030c]/g, '')
    .normalize('NFC');
}

/**
 * Unihan's kHanyuPinlu (readings with their counts in a corpus of modern Chinese) and kTGHZ2013
 * (the readings of the 通用规范汉字表) as character -> { pinlu: [[syllable, count]], tghz: [syllable] }.
 */
function modernReadingFields() {
  const raw = execFileSync(
    '/usr/bin/python3',
    [
      '-c',
      'import bz2, sys\nfor l in bz2.open(sys.argv[1], "rt", encoding="utf-8"):\n' +
        '    if "\\tkHanyuPinlu\\t" in l or "\\tkTGHZ2013\\t" in l: sys.stdout.write(l)',
      UNIHAN,
    ],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  /** @type {Map<string, { pinlu: [string, number][], tghz: string[] }>} */
  const out = new Map();
  for (const line of raw.split('\n')) {
    const [cp, field, value] = line.split('\t');
    if (!value) continue;
    const char = String.fromCodePoint(parseInt(cp.slice(2), 16));
    const entry = out.get(char) ?? { pinlu: [], tghz: [] };
    out.set(char, entry);
    if (field === 'kHanyuPinlu') {
      for (const [, r, n] of value.matchAll(/(\S+?)\((\d+)\)/g)) entry.pinlu.push([unmarked(r), Number(n)]);
    } else {
      for (const item of value.split(' ')) for (const r of item.split(':')[1].split(',')) entry.tghz.push(unmarked(r));
    }
  }
  return out;
}

/**
 * The syllables (toneless) a character is taken to be written for, each with its share: at most
 * two. With counts (kHanyuPinlu): the two commonest syllables by count (the second dropped under
 * 5 %), in proportion. Else the first two readings of unihanDump's order (its customary reading
 * first) that the 通用规范汉字表 (kTGHZ2013) lists, 0.8 / 0.2; else the first reading. Unihan's
 * further readings are mostly those of rare senses or of characters this one stands for as a
 * variant (件 móu, 能 tái): an IME user typing "jian" for 件 never meets them.
 * @param {string[] | undefined} readings unihanDump's readings of the character ("shang4")
 * @param {{ pinlu: [string, number][], tghz: string[] } | undefined} fields
 * @returns {{ syllable: string, share: number }[]}
 */
export function soundsOf(readings, fields) {
  if (fields?.pinlu.length) {
    const counts = new Map();
    for (const [s, n] of fields.pinlu) counts.set(s, (counts.get(s) ?? 0) + n);
    const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 2);
    const total = top.reduce((sum, [, n]) => sum + n, 0);
    const kept = top.filter(([, n], i) => i === 0 || n / total >= 0.05);
    const keptTotal = kept.reduce((sum, [, n]) => sum + n, 0);
    return kept.map(([s, n]) => ({ syllable: s, share: n / keptTotal }));
  }
  const all = [...new Set((readings ?? []).map(syllable))];
  const standard = fields?.tghz.length ? all.filter((s) => fields.tghz.includes(s)) : [];
  const list = standard.length ? standard.slice(0, 2) : all.slice(0, 1);
  return list.map((s, i) => ({ syllable: s, share: list.length === 1 ? 1 : i === 0 ? 0.8 : 0.2 }));
}

/**
 * The syllables one fuzzy sound away from `s` (toneless): z/zh, c/ch, s/sh and n/l initials,
 * an/ang, en/eng, in/ing finals; one change at a time. Not every result is a real syllable.
 * @param {string} s
 */
export function fuzzyVariants(s) {
  const out = new Set();
  const m = /^(zh|ch|sh|z|c|s|n|l)(.+)$/.exec(s);
  if (m) {
    const swap = { zh: 'z', ch: 'c', sh: 's', z: 'zh', c: 'ch', s: 'sh', n: 'l', l: 'n' }[m[1]];
    out.add(swap + m[2]);
  }
  const f = /(ang|eng|ing|an|en|in)$/.exec(s);
  if (f) {
    const swap = { ang: 'an', eng: 'en', ing: 'in', an: 'ang', en: 'eng', in: 'ing' }[f[1]];
    out.add(s.slice(0, f.index) + swap);
  }
  out.delete(s);
  return [...out];
}

/**
 * The shape table of the C++ core (scripts/gen-shape-table's output): character -> its
 * neighbours, most similar first, each with its score (similarity * 255).
 * @returns {Map<string, { char: string, score: number }[]>}
 */
export function parseShapeTable(path = SHAPE_TABLE_PATH) {
  const source = readFileSync(path, 'utf8');
  /** @param {string} name */
  const array = (name) => {
    const m = new RegExp(`\\b${name}\\[[^\\]]*\\]\\s*=\\s*\\{([^}]*)\\}`).exec(source);
    if (!m) throw new Error(`${path}: array ${name} not found`);
    return m[1]
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean)
      .map(Number);
  };
  const codes = array('kCodePoints');
  const offsets = array('kOffsets');
  const neighbours = array('kNeighbours');
  const scores = array('kScores');
  if (offsets.length !== codes.length + 1 || neighbours.length !== scores.length) {
    throw new Error(`${path}: array sizes do not match`);
  }
  const table = new Map();
  codes.forEach((cp, i) => {
    const list = [];
    for (let k = offsets[i]; k < offsets[i + 1]; k++) {
      list.push({ char: String.fromCodePoint(codes[neighbours[k]]), score: scores[k] });
    }
    table.set(String.fromCodePoint(cp), list);
  });
  return table;
}

/**
 * Relative frequency of each Chinese character in the modern sources of the training text: each
 * source of CHECK_SOURCES counted in at most FREQUENCY_BYTES / 8 bytes of its lines and weighed
 * equally (so that the long novels do not set the frequencies of manuals and everyday text).
 * Lines are matched to sources by train.src and stats.json (scripts/build-corpus); without
 * them, the first `maxBytes` of train.txt count as one source.
 * @param {string} corpusDir
 * @param {number} [maxBytes]
 * @returns {Map<string, number>}
 */
export function charFrequencies(corpusDir, maxBytes = FREQUENCY_BYTES) {
  const txt = join(corpusDir, 'train.txt');
  if (!existsSync(txt)) throw new Error(`${txt} missing: run scripts/build-corpus`);
  let sourceOfLine = null;
  let names = ['all'];
  const srcPath = join(corpusDir, 'train.src');
  const statsPath = join(corpusDir, 'stats.json');
  if (existsSync(srcPath) && existsSync(statsPath)) {
    sourceOfLine = readFileSync(srcPath);
    names = JSON.parse(readFileSync(statsPath, 'utf8')).sources;
  }
  const wanted = names.map((n) => sourceOfLine === null || CHECK_SOURCES.includes(n));
  const budget = sourceOfLine === null ? maxBytes : Math.floor(maxBytes / CHECK_SOURCES.length);
  const left = names.map(() => budget);
  /** @type {Map<string, number>[]} */
  const counts = names.map(() => new Map());
  const fd = openSync(txt, 'r');
  try {
    const chunk = Buffer.alloc(1 << 22);
    let carry = Buffer.alloc(0);
    let lineNo = 0;
    /** @param {Buffer} bytes */
    const line = (bytes) => {
      const s = sourceOfLine === null ? 0 : sourceOfLine[lineNo];
      lineNo++;
      if (!wanted[s] || left[s] <= 0) return;
      left[s] -= bytes.length + 1;
      const count = counts[s];
      for (const c of bytes.toString('utf8').match(HAN_ALL) ?? []) count.set(c, (count.get(c) ?? 0) + 1);
    };
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      const data = carry.length ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
      let from = 0;
      for (let nl = data.indexOf(10, from); nl >= 0; nl = data.indexOf(10, from)) {
        line(data.subarray(from, nl));
        from = nl + 1;
      }
      carry = Buffer.from(data.subarray(from));
      if (sourceOfLine === null && left[0] <= 0) break;
    }
    if (carry.length) line(carry);
  } finally {
    closeSync(fd);
  }
  const freq = new Map();
  for (const count of counts) {
    let total = 0;
    for (const v of count.values()) total += v;
    for (const [c, v] of count) freq.set(c, (freq.get(c) ?? 0) + v / total);
  }
  return freq;
}

/** @type {Map<string, ReturnType<typeof makeResources>>} */
const resourceCache = new Map();

/**
 * What error injection needs, read once per corpus directory: readings, frequencies, the common
 * characters, the homophone index and the shape table.
 */
export function checkResources(corpusDir = join(REPO_ROOT, '.cache/corpus')) {
  let r = resourceCache.get(corpusDir);
  if (!r) {
    r = makeResources(corpusDir);
    resourceCache.set(corpusDir, r);
  }
  return r;
}

/** @param {string} corpusDir */
function makeResources(corpusDir) {
  const readings = unihanReadings();
  const fields = modernReadingFields();
  /** @type {Map<string, { syllable: string, share: number }[]>} */
  const sounds = new Map();
  for (const [c, rs] of readings) sounds.set(c, soundsOf(rs, fields.get(c)));
  const shape = parseShapeTable();
  const freq = charFrequencies(corpusDir);
  const common = [...shape.keys()]
    .filter((c) => sounds.has(c) && (freq.get(c) ?? 0) > 0)
    .sort((a, b) => (freq.get(b) ?? 0) - (freq.get(a) ?? 0) || (a.codePointAt(0) ?? 0) - (b.codePointAt(0) ?? 0))
    .slice(0, COMMON_COUNT);
  const commonSet = new Set(common);
  /** @type {Map<string, { char: string, weight: number }[]>} syllable -> the common characters, weighted by frequency times the syllable's share */
  const bySyllable = new Map();
  for (const c of common) {
    for (const { syllable: s, share } of sounds.get(c) ?? []) {
      const list = bySyllable.get(s) ?? [];
      list.push({ char: c, weight: (freq.get(c) ?? 0) * share });
      bySyllable.set(s, list);
    }
  }
  /** @type {Map<string, string>} */
  const group = new Map();
  for (const g of INTERCHANGEABLE) for (const c of g) group.set(c, g);
  /** @param {string} c */
  const syllables = (c) => (sounds.get(c) ?? []).map((x) => x.syllable);
  return {
    readings,
    sounds,
    syllables,
    shape,
    freq,
    common,
    commonSet,
    bySyllable,
    group,
    randomPool: common.slice(0, RANDOM_POOL),
  };
}

/**
 * Candidate replacements of `right` for one kind, as [{ char, weight }] (empty: none).
 * @param {string} right
 * @param {ErrorKind} kind
 * @param {ReturnType<typeof checkResources>} res
 * @param {() => number} random
 */
export function candidates(right, kind, res, random = Math.random) {
  const own = res.sounds.get(right) ?? [];
  if (!own.length) return [];
  const ownSet = new Set(own.map((x) => x.syllable));
  /** @param {string} c */
  const sharesSound = (c) => res.syllables(c).some((s) => ownSet.has(s));
  /** @param {string} c */
  const allowed = (c) => c !== right && res.commonSet.has(c) && !(res.group.get(c) ?? '').includes(right);
  // The syllable the writer meant, by its share.
  const meant = () => weightedPick(own, (x) => x.share, random).syllable;
  if (kind === 'sound') return (res.bySyllable.get(meant()) ?? []).filter(({ char }) => allowed(char));
  if (kind === 'near-sound') {
    const out = new Map();
    for (const v of fuzzyVariants(meant())) {
      for (const { char, weight } of res.bySyllable.get(v) ?? []) {
        if (allowed(char) && !sharesSound(char)) out.set(char, (out.get(char) ?? 0) + weight);
      }
    }
    return [...out].map(([char, weight]) => ({ char, weight }));
  }
  if (kind === 'shape') {
    return (res.shape.get(right) ?? [])
      .filter(({ char }) => allowed(char) && !sharesSound(char))
      .map(({ char, score }) => ({ char, weight: score }));
  }
  const fuzzy = new Set([...ownSet].flatMap(fuzzyVariants));
  const looksLike = new Set((res.shape.get(right) ?? []).map(({ char }) => char));
  return res.randomPool
    .filter(
      (c) =>
        allowed(c) &&
        !looksLike.has(c) &&
        !(res.shape.get(c) ?? []).some(({ char }) => char === right) &&
        !res.syllables(c).some((s) => ownSet.has(s) || fuzzy.has(s)),
    )
    .map((char) => ({ char, weight: 1 }));
}

/** @template T @param {T[]} items @param {(x: T) => number} weight @param {() => number} random */
function weightedPick(items, weight, random) {
  let total = 0;
  for (const x of items) total += weight(x);
  let r = random() * total;
  for (const x of items) {
    r -= weight(x);
    if (r < 0) return x;
  }
  return items[items.length - 1];
}

/** @template T @param {T[]} items @param {() => number} random */
function shuffle(items, random) {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

const OPENERS = '“‘「『（(《';
const CLOSERS = '”’」』）)》';

/** True when the brackets and quotes of `s` are balanced (a piece of a longer sentence is not). @param {string} s */
function balanced(s) {
  const stack = [];
  for (const c of s) {
    if (OPENERS.includes(c)) stack.push(CLOSERS[OPENERS.indexOf(c)]);
    else if (CLOSERS.includes(c) && stack.pop() !== c) return false;
  }
  return stack.length === 0 && (s.match(/"/g) ?? []).length % 2 === 0;
}

/** 8-60 code points, mostly Chinese: at least 80 % of its letters and digits are Chinese characters. @param {string} s */
export function usableCheckSentence(s) {
  const length = [...s].length;
  if (length < MIN_LENGTH || length > MAX_LENGTH || !balanced(s)) return false;
  const han = (s.match(HAN_ALL) ?? []).length;
  const other = (s.match(/[\p{L}\p{N}]/gu) ?? []).length - han;
  return han >= 6 && han >= 0.8 * (han + other);
}

/**
 * The candidate sentences of one split file: lines short enough taken whole, longer ones cut
 * after 。！？； (and any closing quote), keeping the pieces that end a sentence. Novels are
 * hard-wrapped (a line ends mid-sentence, the next goes on with it): there the first piece of a
 * line is dropped too.
 * @param {string} path
 * @param {string} source
 * @returns {string[]}
 */
export function checkSentences(path, source) {
  if (!existsSync(path)) return [];
  const out = [];
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    if (source !== 'novels' && usableCheckSentence(line)) {
      out.push(line);
      continue;
    }
    const pieces = line.match(/[^。！？；]+(?:[。！？；]+[”’」』）)]*|$)/gu) ?? [];
    pieces.forEach((piece, i) => {
      const s = piece.trim();
      if (source === 'novels' && i === 0) return;
      if (!/[。！？；][”’」』）)]*$/u.test(s)) return;
      if (usableCheckSentence(s)) out.push(s);
    });
  }
  return out;
}

/** Seeded PRNG of one (seed, split, source). @param {number} seed @param {string[]} parts */
function prngOf(seed, ...parts) {
  return mulberry32(
    createHash('sha1')
      .update(`${seed}:${parts.join(':')}`)
      .digest()
      .readUInt32LE(0),
  );
}

/**
 * Puts `count` errors into `correct`, at characters of the 通用规范汉字表 (the shape table's set;
 * never digits, Latin, punctuation, or rare and traditional characters), two errors never side by
 * side. Returns the errors (sorted by start), or null when the
 * sentence has no position that takes one.
 * @param {string} correct
 * @param {number} count
 * @param {ReturnType<typeof checkResources>} res
 * @param {() => number} random
 * @param {() => ErrorKind} [drawKind]
 * @returns {CheckError[] | null}
 */
export function injectErrors(
  correct,
  count,
  res,
  random,
  drawKind = () => weightedPick(KINDS, (k) => KIND_WEIGHTS[k], random),
) {
  /** @type {{ start: number, end: number, char: string, index: number }[]} */
  const positions = [];
  let offset = 0;
  let index = 0;
  for (const char of correct) {
    if (HAN.test(char) && res.shape.has(char) && res.sounds.get(char)?.length)
      positions.push({ start: offset, end: offset + char.length, char, index });
    offset += char.length;
    index++;
  }
  /** @type {(CheckError & { index: number })[]} */
  const errors = [];
  for (let e = 0; e < count; e++) {
    const first = drawKind();
    // The kind drawn first; should no position take it, the others in order.
    const kinds = [first, ...KINDS.filter((k) => k !== first)];
    let placed = false;
    for (const kind of kinds) {
      const free = positions.filter((p) => errors.every((x) => Math.abs(x.index - p.index) > 1));
      for (const p of shuffle(free, random)) {
        const options = candidates(p.char, kind, res, random);
        if (!options.length) continue;
        const { char } = weightedPick(options, (o) => o.weight, random);
        errors.push({ start: p.start, end: p.end, wrong: char, right: p.char, kind, index: p.index });
        placed = true;
        break;
      }
      if (placed) break;
    }
    if (!placed) return errors.length ? errors.sort((a, b) => a.start - b.start).map(({ index: _, ...x }) => x) : null;
  }
  return errors.sort((a, b) => a.start - b.start).map(({ index: _, ...x }) => x);
}

/**
 * Kinds drawn as from a shuffled deck of 20 cards dealt in KIND_WEIGHTS' proportions (11 sound,
 * 3 near-sound, 4 shape, 2 random), a new deck when one runs out: even a source's few dozen
 * errors come in about those shares.
 * @param {() => number} random
 * @returns {() => ErrorKind}
 */
export function kindDeck(random) {
  /** @type {ErrorKind[]} */
  let deck = [];
  return () => {
    if (!deck.length)
      deck = shuffle(
        KINDS.flatMap((k) => Array(Math.round(20 * KIND_WEIGHTS[k])).fill(k)),
        random,
      );
    return /** @type {ErrorKind} */ (deck.pop());
  };
}

/** `correct` with the errors put in. @param {string} correct @param {{ start: number, end: number, wrong: string }[]} errors */
export function applyErrors(correct, errors) {
  let text = correct;
  for (const { start, end, wrong } of errors) text = text.slice(0, start) + wrong + text.slice(end);
  return text;
}

/**
 * The check cases of a split ("dev" or "val"): up to `total` sentences, shared out evenly over
 * `sources` (one with fewer sentences gives the others its share), each source's sentences drawn
 * at random (seeded); every other one of a source gets errors (1, or 2 one time in five), so half
 * are correct. Options: seed, total (default 600), perSource (a cap per source), sources,
 * corpusDir (default .cache/corpus).
 * @param {string} split
 * @param {{ seed?: number, total?: number, perSource?: number, sources?: string[], corpusDir?: string }} [options]
 * @returns {CheckCase[]}
 */
export function buildCheckSet(
  split,
  {
    seed = 27,
    total = 600,
    perSource = Infinity,
    sources = CHECK_SOURCES,
    corpusDir = join(REPO_ROOT, '.cache/corpus'),
  } = {},
) {
  const res = checkResources(corpusDir);
  const seen = new Set();
  const pools = sources.map((source) => {
    const random = prngOf(seed, split, source, 'sentences');
    const unique = checkSentences(join(corpusDir, split, `${source}.txt`), source).filter(
      (s) => !seen.has(s) && seen.add(s),
    );
    return shuffle(unique, random);
  });
  // Even shares; a source short of its share leaves the rest to the others.
  const take = pools.map(() => 0);
  let left = total;
  for (;;) {
    const open = pools.map((p, i) => i).filter((i) => take[i] < Math.min(pools[i].length, perSource));
    if (!open.length || left <= 0) break;
    const share = Math.max(1, Math.floor(left / open.length));
    for (const i of open) {
      const add = Math.min(share, Math.min(pools[i].length, perSource) - take[i], left);
      take[i] += add;
      left -= add;
      if (left <= 0) break;
    }
  }
  /** @type {CheckCase[]} */
  const cases = [];
  sources.forEach((source, i) => {
    const random = prngOf(seed, split, source, 'errors');
    const drawKind = kindDeck(random);
    let picked = 0;
    for (const correct of pools[i]) {
      if (picked === take[i]) break;
      if (picked % 2 === 0) {
        cases.push({ source, text: correct, correct, errors: [] });
        picked++;
        continue;
      }
      const han = (correct.match(HAN_ALL) ?? []).length;
      const count = han >= TWO_ERRORS_MIN_HAN && random() < TWO_ERRORS_SHARE ? 2 : 1;
      const errors = injectErrors(correct, count, res, random, drawKind);
      if (!errors) continue; // no position takes an error: the next sentence
      cases.push({ source, text: applyErrors(correct, errors), correct, errors });
      picked++;
    }
  });
  return cases;
}

/** Counts of a set: sentences, with errors, errors by kind, sentences by source. @param {CheckCase[]} cases */
export function checkSetCounts(cases) {
  const byKind = Object.fromEntries(KINDS.map((k) => [k, 0]));
  /** @type {Record<string, { sentences: number, withErrors: number }>} */
  const bySource = {};
  let withErrors = 0;
  let errors = 0;
  let twoErrors = 0;
  for (const c of cases) {
    bySource[c.source] ??= { sentences: 0, withErrors: 0 };
    bySource[c.source].sentences++;
    if (c.errors.length) {
      withErrors++;
      bySource[c.source].withErrors++;
    }
    if (c.errors.length === 2) twoErrors++;
    for (const e of c.errors) {
      byKind[e.kind]++;
      errors++;
    }
  }
  return { sentences: cases.length, withErrors, twoErrors, errors, byKind, bySource };
}
