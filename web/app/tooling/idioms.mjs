/**
 * The app's idiom dictionary: the raw data's idioms/idioms.csv (columns Idiom, Pinyin,
 * Letter, Explanation, Synonym; RFC 4180 quoting) -> a compact JSON file the page loads
 * when it first needs it (a filled blank inside four Chinese characters), for its idiom card:
 *   { "format": "tiankong-idioms/1", "generated": …, "license": …, "count": N,
 *     "idioms": { "掩耳盗铃": ["yǎn ěr dào líng", "解释…"] } }
 * Only four-character idioms are kept (the card completes 4-character windows). The file is
 * derived once by scripts/build-idioms and committed (web/app/data/idioms.json), so a clone
 * builds the app without the raw data.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dataPath } from '../../../model/tooling/data-paths.mjs';

export const IDIOMS_FORMAT = 'tiankong-idioms/1';

/** The idiom dictionary of the raw data (TIANKONG_DATA, default ../shared/data). */
export const DEFAULT_IDIOMS_CSV = dataPath('idioms/idioms.csv');

/** The committed, generated dictionary the app build ships as idioms.json. */
export const COMMITTED_IDIOMS_JSON = fileURLToPath(new URL('../data/idioms.json', import.meta.url));

/** Where the data comes from and under which licences (also in web/app/data/README.md). */
export const IDIOMS_LICENSE =
  'chinese-xinhua (github.com/pwxcoo/chinese-xinhua) idiom data: MIT, Copyright (c) 2018 PWXCOO; ' +
  'the idioms.csv file it was taken from: MPL-2.0. See web/app/data/LICENSE-chinese-xinhua-MIT and LICENSE-MPL-2.0.md.';

/**
 * Parses RFC 4180 CSV text (quoted fields, "" escapes, CRLF or LF, newlines inside quotes)
 * into rows of strings. Throws on an unterminated quoted field, naming the line.
 */
export function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let inQuotes = false;
  let quoteStartLine = 0;
  let line = 1;
  for (let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; i < text.length; i++) {
    const c = text[i];
    if (inQuotes) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else inQuotes = false;
      } else {
        if (c === '\n') line++;
        field += c;
      }
    } else if (c === '"' && field === '') {
      inQuotes = true;
      quoteStartLine = line;
    } else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      line++;
    } else field += c;
  }
  if (inQuotes) throw new Error(`unterminated quoted field starting on line ${quoteStartLine}`);
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/**
 * Turns the parsed CSV into the asset object. Throws when the header lacks a needed column.
 * Rows whose idiom is not four characters are skipped; the first of duplicate idioms wins.
 */
export function buildIdiomAsset(rows) {
  const [header, ...body] = rows;
  const column = (name) => {
    const index = header?.indexOf(name) ?? -1;
    if (index < 0) throw new Error(`idioms CSV has no "${name}" column (header: ${JSON.stringify(header)})`);
    return index;
  };
  const idiomCol = column('Idiom');
  const pinyinCol = column('Pinyin');
  const explanationCol = column('Explanation');
  const idioms = {};
  let count = 0;
  for (const row of body) {
    const idiom = (row[idiomCol] ?? '').trim();
    if ([...idiom].length !== 4 || Object.hasOwn(idioms, idiom)) continue;
    idioms[idiom] = [(row[pinyinCol] ?? '').trim(), (row[explanationCol] ?? '').trim()];
    count++;
  }
  return {
    format: IDIOMS_FORMAT,
    generated: 'by scripts/build-idioms from idioms/idioms.csv of the raw data; do not edit',
    license: IDIOMS_LICENSE,
    count,
    idioms,
  };
}

/**
 * Reads `csvPath` and returns the asset's JSON text, or null (with a note on stderr) when
 * the CSV is absent, so builds without the shared data still succeed without an idiom card.
 */
export function buildIdiomJson(csvPath = DEFAULT_IDIOMS_CSV, log = console) {
  if (!existsSync(csvPath)) {
    log.warn(`note: ${csvPath} not found: building without the idiom dictionary (the idiom card stays hidden).`);
    return null;
  }
  const asset = buildIdiomAsset(parseCsv(readFileSync(csvPath, 'utf8')));
  return JSON.stringify(asset);
}
