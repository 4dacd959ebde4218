// The core's pinyin table (wasm/src/pinyin.cc over the generated pinyin_table.cc) against an
// independent parse of Unihan_Readings.txt in Python, for every character: the same readings in
// the same order (kHanyuPinlu by count, then kMandarin, kTGHZ2013, kXHC1983, kHanyuPinyin).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

const REPO = join(import.meta.dirname, '../..');
const TOOL = join(REPO, 'build/native/wasm/tiankong_pinyin');
const UNIHAN = '/usr/share/unicode/Unihan_Readings.txt.bz2';

// Precomposed tone-marked letters (the way the data spells them) -> letter + tone; written
// independently of scripts/gen-pinyin-table, which decomposes with unicodedata instead.
const REFERENCE = String.raw`
import bz2, re, sys
marks = {}
for base, forms in {'a': 'āáǎà', 'e': 'ēéěè', 'i': 'īíǐì', 'o': 'ōóǒò', 'u': 'ūúǔù', 'ü': 'ǖǘǚǜ',
                    'n': 'ńňǹ', 'm': 'ḿ'}.items():
    for k, ch in enumerate(forms):
        tone = k + 1 if base not in 'nm' else {'n': [2, 3, 4], 'm': [2]}[base][k]
        marks[ch] = (base, tone)
def reading(s):
    tone, out = 5, ''
    s = s.replace('ê̄', 'ê\u0304').replace('ê̌', 'ê\u030c').replace('ế', 'ê\u0301').replace('ề', 'ê\u0300')
    for ch in s:
        if ch in marks:
            out += marks[ch][0]; tone = marks[ch][1]
        elif ch in '\u0304\u0301\u030c\u0300':
            tone = '\u0304\u0301\u030c\u0300'.index(ch) + 1
        else:
            out += ch
    return out + str(tone)
fields = {}
for line in bz2.open(sys.argv[1], 'rt', encoding='utf-8'):
    m = re.match(r'U\+([0-9A-F]+)\t(kHanyuPinlu|kMandarin|kTGHZ2013|kXHC1983|kHanyuPinyin)\t(.*)', line)
    if m:
        fields.setdefault(int(m.group(1), 16), {})[m.group(2)] = m.group(3)
for cp in sorted(fields):
    f = fields[cp]
    if not any(k in f for k in ('kTGHZ2013', 'kXHC1983', 'kHanyuPinlu')):
        continue
    order = []
    pinlu = [(int(n), i, r) for i, (r, n) in enumerate(re.findall(r'(\S+?)\((\d+)\)', f.get('kHanyuPinlu', '')))]
    order += [reading(r) for _, _, r in sorted(pinlu, key=lambda x: (-x[0], x[1]))]
    order += [reading(r) for r in f.get('kMandarin', '').split()]
    for key in ('kTGHZ2013', 'kXHC1983', 'kHanyuPinyin'):
        for item in f.get(key, '').split():
            order += [reading(r) for r in item.split(':', 1)[1].split(',')]
    seen = []
    for r in order:
        if r not in seen:
            seen.append(r)
    print('U+%04X\t%s' % (cp, ' '.join(seen)))
`;

describe.skipIf(!existsSync(UNIHAN) || !existsSync(TOOL))('pinyin table', () => {
  test('every generated entry equals an independent parse of Unihan', () => {
    const core = execFileSync(TOOL, ['--dump'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const reference = execFileSync('/usr/bin/python3', ['-c', REFERENCE, UNIHAN], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
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
