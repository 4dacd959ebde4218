// The build-time idiom dictionary: our CSV parser against Python's csv module (the reference).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
// @ts-expect-error -- plain ESM build module, no typings
import { buildIdiomAsset, buildIdiomJson, DEFAULT_IDIOMS_CSV, parseCsv } from '../../web/app/tooling/idioms.mjs';

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
    expect(buildIdiomJson('/nonexistent/idioms.csv', { warn: (m: string) => notes.push(m) })).toBeNull();
    expect(notes[0]).toMatch(/idiom card stays hidden/);
  });
});

describe.skipIf(!existsSync(DEFAULT_IDIOMS_CSV))('the shared idioms.csv', () => {
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
    const reference = JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, DEFAULT_IDIOMS_CSV], { maxBuffer: 64 << 20 }).toString());
    const asset = buildIdiomAsset(parseCsv(readFileSync(DEFAULT_IDIOMS_CSV, 'utf8')));
    expect(asset.count).toBe(Object.keys(reference).length);
    expect(asset.idioms).toEqual(reference);
    expect(asset.idioms['掩耳盗铃'][0]).toBe('yǎn ěr dào líng');
  });
});
