// The app's idiom dictionary: our CSV parser against Python's csv module (the reference), on the
// committed sample and, when it is there, the raw data; the committed generated file is complete,
// licensed and up to date.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import {
  buildIdiomAsset,
  buildIdiomJson,
  COMMITTED_IDIOMS_JSON,
  DEFAULT_IDIOMS_CSV,
  parseCsv,
} from '../../web/app/tooling/idioms.mjs';

describe('parseCsv', () => {
  test('quotes, doubled quotes, separators and newlines inside quotes, CRLF, BOM', () => {
    const text = '\ufeffa,b,c\r\n"x, y","say ""hi""","line1\nline2"\n,,\nlast';
    expect(parseCsv(text)).toEqual([['a', 'b', 'c'], ['x, y', 'say "hi"', 'line1\nline2'], ['', '', ''], ['last']]);
  });

  test('an unterminated quote is an error naming its line', () => {
    expect(() => parseCsv('a,b\n"open,c\n')).toThrow(/line 2/);
  });

  test('a missing column is an error naming it', () => {
    expect(() => buildIdiomAsset([['Idiom', 'Pinyin']])).toThrow(/Explanation/);
  });

  test('absent CSV: a note, no asset', () => {
    const notes: string[] = [];
    expect(
      buildIdiomJson('/nonexistent/idioms.csv', { warn: (m: string) => notes.push(m) } as unknown as Console),
    ).toBeNull();
    expect(notes[0]).toMatch(/idiom card stays hidden/);
  });
});

const FIXTURE_CSV = fileURLToPath(new URL('../fixtures/data/idioms/idioms.csv', import.meta.url));

describe.each([
  ['the committed idioms.csv sample (tests/fixtures)', FIXTURE_CSV],
  ...(existsSync(DEFAULT_IDIOMS_CSV) ? [["the raw data's idioms.csv", DEFAULT_IDIOMS_CSV]] : []),
])('%s', (_name, csv) => {
  test('same idioms, pinyin and explanations as Python csv.DictReader', () => {
    const script = `
import csv, json, sys
out = {}
with open(sys.argv[1], encoding='utf-8-sig', newline='') as f:
    for row in csv.DictReader(f):
        idiom = row['Idiom'].strip()
        if len(idiom) == 4 and idiom not in out:
            out[idiom] = [row['Pinyin'].strip(), row['Explanation'].strip()]
json.dump(out, sys.stdout, ensure_ascii=False)`;
    const reference = JSON.parse(
      execFileSync('/usr/bin/python3', ['-c', script, csv], { maxBuffer: 64 << 20 }).toString(),
    );
    const asset = buildIdiomAsset(parseCsv(readFileSync(csv, 'utf8')));
    expect(asset.count).toBe(Object.keys(reference).length);
    expect(asset.idioms).toEqual(reference);
    expect((asset.idioms as Record<string, string[]>)['掩耳盗铃'][0]).toBe('yǎn ěr dào líng');
  });
});

describe('the committed, generated web/app/data/idioms.json', () => {
  const asset = JSON.parse(readFileSync(COMMITTED_IDIOMS_JSON, 'utf8'));

  test('marked generated, with its licence, the whole dictionary', () => {
    expect(asset.format).toBe('tiankong-idioms/1');
    expect(asset.generated).toMatch(/scripts\/build-idioms/);
    expect(asset.license).toMatch(/MIT/);
    expect(asset.license).toMatch(/MPL-2\.0/);
    expect(asset.count).toBe(Object.keys(asset.idioms).length);
    expect(asset.count).toBeGreaterThan(29_000);
    expect((asset.idioms as Record<string, string[]>)['掩耳盗铃'][0]).toBe('yǎn ěr dào líng');
    const licences = readdirSync(dirname(COMMITTED_IDIOMS_JSON));
    expect(licences).toEqual(expect.arrayContaining(['LICENSE-chinese-xinhua-MIT', 'LICENSE-MPL-2.0.md', 'README.md']));
  });

  test.skipIf(!existsSync(DEFAULT_IDIOMS_CSV))(
    'is what scripts/build-idioms makes from the raw data (up to date)',
    () => {
      expect(`${buildIdiomJson(DEFAULT_IDIOMS_CSV)}\n`).toBe(readFileSync(COMMITTED_IDIOMS_JSON, 'utf8'));
    },
  );

  test('scripts/build-idioms without the raw data: says so, exit 0, the committed file untouched', () => {
    const before = readFileSync(COMMITTED_IDIOMS_JSON);
    const run = spawnSync(process.execPath, [fileURLToPath(new URL('../../scripts/build-idioms', import.meta.url))], {
      encoding: 'utf8',
      env: { ...process.env, TIANKONG_DATA: '/nonexistent' },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/needs the raw data in \/nonexistent.*skipped/);
    expect(readFileSync(COMMITTED_IDIOMS_JSON).equals(before)).toBe(true);
  });
});
