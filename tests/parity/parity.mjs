// Tokenizer parity: the native tiankong_tokenize against Hugging Face `tokenizers` (npm,
// the Rust implementation), on the corpus, an adversarial set and every code point.
// Library for tokenizer-parity.test.ts and a CLI:
//   node tests/parity/parity.mjs [--all]   (--all: every corpus line instead of a sample)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import tokenizers from 'tokenizers';
import { dataDir } from '../../model/tooling/data-paths.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');
export const sharedData = dataDir();
const fixtures = join(repoRoot, 'tests', 'fixtures', 'data');
/** bert-base-chinese's vocab and tokenizer.json: committed fixtures (the same files as the raw data's). */
export const vocabDir = join(fixtures, 'vocab', 'bert-base-chinese');
/** The full corpus of the raw data (TIANKONG_DATA), when it is there. */
export const fullCorpusDir = join(sharedData, 'corpus');
/** True when the full corpus is available; otherwise the committed corpus sample stands in. */
export const hasFullCorpus = existsSync(fullCorpusDir);
export const corpusDir = hasFullCorpus ? fullCorpusDir : join(fixtures, 'corpus');
export const nativeTool = join(repoRoot, 'build', 'native', 'wasm', 'tiankong_tokenize');
export const CORPUS_SAMPLE_STRIDE = 9; // every 9th line of ~471k: ~52k lines
export const NO_TRUNCATION = 1 << 30;

// Normalizer settings compared; `flags` are the native tool's, `hf` the BertNormalizer's.
export const CONFIGS = {
  'bert-base-chinese': { flags: [], hf: null },
  lowercase: {
    flags: ['--lowercase'],
    hf: { cleanText: true, handleChineseChars: true, stripAccents: true, lowercase: true },
  },
  'no-clean-text': {
    flags: ['--no-clean-text'],
    hf: { cleanText: false, handleChineseChars: true, stripAccents: false, lowercase: false },
  },
};

/** Why parity cannot run here, or null. */
export function missingPrerequisite() {
  if (!existsSync(join(vocabDir, 'tokenizer.json')))
    return `vocab fixture not found in ${vocabDir} (scripts/make-test-fixtures): tokenizer parity skipped`;
  if (!existsSync(nativeTool))
    return `native tool not built (${nativeTool}): run cmake --preset native && cmake --build --preset native`;
  return null;
}

export function hfTokenizer(configName) {
  const tokenizer = tokenizers.Tokenizer.fromFile(join(vocabDir, 'tokenizer.json'));
  const { hf } = CONFIGS[configName];
  if (hf) tokenizer.setNormalizer(tokenizers.bertNormalizer(hf));
  return tokenizer;
}

/**
 * Corpus lines: every CORPUS_SAMPLE_STRIDE-th line over all files of the full corpus
 * (deterministic), or all; without the full corpus, every line of the committed sample.
 */
export function corpusLines({ all = !hasFullCorpus } = {}) {
  const files = readdirSync(corpusDir)
    .filter((f) => f.endsWith('.txt') && !f.startsWith('LICENSE'))
    .sort();
  const lines = [];
  let index = 0;
  for (const file of files) {
    for (const line of readFileSync(join(corpusDir, file), 'utf8').split('\n')) {
      if (all || index % CORPUS_SAMPLE_STRIDE === 0) lines.push(line);
      index++;
    }
  }
  return lines;
}

export function adversarial() {
  return JSON.parse(readFileSync(join(here, 'adversarial.json'), 'utf8'));
}

/**
 * Every Unicode scalar value, each as two words: alone and between 'a' and 'b' (the second
 * tells "removed" from "whitespace" and shows punctuation splits). Words are independent in
 * WordPiece, so 64 code points share a line.
 */
export function everyCodePointLines() {
  const lines = [];
  let words = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (cp === 0x0a) continue; // the tool's line separator; '\n' is covered as whitespace by '\r', '\t'
    const c = String.fromCodePoint(cp);
    words.push(`${c} a${c}b`);
    if (words.length === 64) {
      lines.push(words.join(' '));
      words = [];
    }
  }
  if (words.length) lines.push(words.join(' '));
  return lines;
}

/** Runs the native tool over `lines` (one input each); returns one parsed JSON per line. */
export function nativeEncode(lines, { flags = [], maxLength = NO_TRUNCATION } = {}) {
  const vocab = join(vocabDir, 'vocab.txt');
  const result = spawnSync(nativeTool, ['--vocab', vocab, '--json', '--max-length', String(maxLength), ...flags], {
    input: lines.join('\n') + '\n',
    maxBuffer: 1 << 30,
  });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${nativeTool} exited ${result.status}: ${result.stderr}`);
  const out = result.stdout.toString('utf8').split('\n');
  out.pop();
  if (out.length !== lines.length)
    throw new Error(`native tool printed ${out.length} results for ${lines.length} lines`);
  return out.map((l) => JSON.parse(l));
}

/** HF encodings of `lines`, offsets converted from code points (what npm reports) to UTF-16. */
export async function hfEncode(tokenizer, lines) {
  const results = [];
  const batch = 2048;
  for (let i = 0; i < lines.length; i += batch) {
    const encodings = await tokenizer.encodeBatch(lines.slice(i, i + batch));
    encodings.forEach((e, k) => {
      const line = lines[i + k];
      const utf16At = codePointToUtf16(line);
      results.push({
        tokens: e.getTokens(),
        ids: e.getIds(),
        offsets: e.getOffsets().map(([s, t]) => [utf16At[s], utf16At[t]]),
      });
    });
  }
  return results;
}

/** utf16At[k] = UTF-16 index of the k-th code point of s (k up to the code point count). */
function codePointToUtf16(s) {
  const table = [0];
  let u = 0;
  for (const c of s) {
    u += c.length;
    table.push(u);
  }
  return table;
}

// JSON with invisible characters (controls, format, private use, separators, U+FFFD) escaped.
const show = (s) =>
  JSON.stringify(s).replace(/[\p{C}\p{Zl}\p{Zp}\u{fffd}]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);

/**
 * Compares our encodings with HF's, line by line: ids, then offsets (both UTF-16). Returns { compared, differing: [readable descriptions] }.
 */
export function compare(lines, ours, theirs) {
  const differing = [];
  for (let i = 0; i < lines.length; i++) {
    const a = ours[i];
    const b = theirs[i];
    const idsEqual = a.ids.length === b.ids.length && a.ids.every((id, k) => id === b.ids[k]);
    const offsetsEqual = idsEqual && a.offsets.every(([s, e], k) => s === b.offsets[k][0] && e === b.offsets[k][1]);
    if (idsEqual && offsetsEqual) continue;
    const what = idsEqual ? 'offsets' : 'ids';
    differing.push(
      `${what} differ for ${show(lines[i])}\n  ours: ${JSON.stringify(a.tokens)} ${JSON.stringify(a.offsets)}\n  HF:   ${JSON.stringify(b.tokens)} ${JSON.stringify(b.offsets)}`,
    );
  }
  return { compared: lines.length, differing };
}

/**
 * Runs one parity suite: our encodings of `lines` vs HF's of `hfLines` (same by default), in
 * chunks so that the whole corpus fits in memory.
 */
export async function paritySuite(configName, lines, hfLines = lines) {
  const chunk = 20_000;
  const hf = hfTokenizer(configName);
  const result = { compared: 0, differing: [] };
  for (let i = 0; i < lines.length; i += chunk) {
    const part = lines.slice(i, i + chunk);
    const ours = nativeEncode(part, { flags: CONFIGS[configName].flags });
    const theirs = await hfEncode(hf, hfLines.slice(i, i + chunk));
    const { compared, differing } = compare(part, ours, theirs);
    result.compared += compared;
    result.differing.push(...differing);
  }
  return result;
}

/** The mask variants (ours) against HF on the same text with the canonical "[MASK]". */
export function canonicalMask(variant) {
  return variant.replace(/[[［【][mMｍＭ][aAａＡ][sSｓＳ][kKｋＫ][\]］】]/g, '[MASK]');
}

async function main() {
  const all = process.argv.includes('--all');
  const missing = missingPrerequisite();
  if (missing) {
    console.log(missing);
    return;
  }
  let failed = false;
  const report = (name, { compared, differing }) => {
    console.log(`${name}: ${compared} inputs, ${differing.length} differ`);
    for (const d of differing.slice(0, 50)) console.log(d);
    failed ||= differing.length > 0;
  };
  if (hasFullCorpus) {
    const lines = corpusLines({ all });
    report(
      `corpus (${all ? 'all lines' : `every ${CORPUS_SAMPLE_STRIDE}th line`})`,
      await paritySuite('bert-base-chinese', lines),
    );
  } else {
    console.log(
      `the full corpus is absent (${fullCorpusDir}; set TIANKONG_DATA to the raw data): full-corpus parity skipped, ` +
        'the committed corpus sample (tests/fixtures/data/corpus) runs instead',
    );
    report(
      'corpus sample (tests/fixtures/data/corpus, every line)',
      await paritySuite('bert-base-chinese', corpusLines()),
    );
  }
  const { cases, mask_variants: masks } = adversarial();
  for (const config of Object.keys(CONFIGS)) {
    report(`adversarial [${config}]`, await paritySuite(config, cases));
    report(`every code point [${config}]`, await paritySuite(config, everyCodePointLines()));
  }
  report('mask variants', await paritySuite('bert-base-chinese', masks, masks.map(canonicalMask)));
  process.exitCode = failed ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
