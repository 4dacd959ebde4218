// The core's pinyin table (wasm/src/pinyin.cc over the generated pinyin_table.cc) against an
// independent parse of Unihan_Readings.txt in Python, for every character: the same readings in
// the same order (kHanyuPinlu by count, then kMandarin, kTGHZ2013, kXHC1983, kHanyuPinyin).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { UNIHAN, unihanDump } from '../harness/unihan-reference.mjs';

const REPO = join(import.meta.dirname, '../..');
const TOOL = join(REPO, 'build/native/wasm/tiankong_pinyin');

describe.skipIf(!existsSync(UNIHAN) || !existsSync(TOOL))('pinyin table', () => {
  test('every generated entry equals an independent parse of Unihan', () => {
    const core = execFileSync(TOOL, ['--dump'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const reference = unihanDump();
    const coreLines = core.trimEnd().split('\n');
    const refLines = reference.trimEnd().split('\n');
    expect(coreLines.length).toBe(refLines.length);
    const mismatches = coreLines.filter((line, i) => line !== refLines[i]);
    expect(mismatches.slice(0, 5)).toEqual([]);
    // Every character of the 通用规范汉字表 (kTGHZ2013: 8 105) has readings.
    expect(coreLines.length).toBeGreaterThanOrEqual(8105);
  });

  test('readings with tone marks on the command line', () => {
    const out = execFileSync(TOOL, ['上行绿'], { encoding: 'utf8' });
    expect(out.split('\n').slice(0, 3)).toEqual(['上 shàng,shang,shǎng', '行 xíng,háng,héng,hàng,xìng', '绿 lǜ,lù']);
  });
});
