// An independent reading of Unicode's Unihan (Debian's unicode-data), in Python, for tests of
// the core's pinyin table and of everything built on it: each character's Mandarin readings as
// syllable + tone number ("shang4"), in the order the generator documents (kMandarin's first
// value, kHanyuPinlu by count, then kMandarin, kTGHZ2013, kXHC1983, kHanyuPinyin), for every
// character of kTGHZ2013, kXHC1983 or kHanyuPinlu; a reading only kHanyuPinyin lists (classical
// usage) is not standard.
// Written apart from scripts/gen-pinyin-table (which decomposes marks
// with unicodedata instead).
import { execFileSync } from 'node:child_process';

/** Where Debian's unicode-data puts the readings. */
export const UNIHAN = '/usr/share/unicode/Unihan_Readings.txt.bz2';

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
    order = [reading(r) for r in f.get('kMandarin', '').split()[:1]]
    pinlu = [(int(n), i, r) for i, (r, n) in enumerate(re.findall(r'(\S+?)\((\d+)\)', f.get('kHanyuPinlu', '')))]
    order += [reading(r) for _, _, r in sorted(pinlu, key=lambda x: (-x[0], x[1]))]
    order += [reading(r) for r in f.get('kMandarin', '').split()]
    for key in ('kTGHZ2013', 'kXHC1983'):
        for item in f.get(key, '').split():
            order += [reading(r) for r in item.split(':', 1)[1].split(',')]
    # A reading some modern source lists (anything but kHanyuPinyin alone) is standard.
    modern = set(order)
    for item in f.get('kHanyuPinyin', '').split():
        for r in item.split(':', 1)[1].split(','):
            order.append(reading(r))
    seen = []
    for r in order:
        if r not in seen:
            seen.append(r)
    print('U+%04X\t%s' % (cp, ' '.join(r if r in modern else r + '*' for r in seen)))
`;

/**
 * Lines "U+4E0A\tshang4 shang5 shang3", sorted by code point (as `tiankong_pinyin --dump` prints),
 * a reading that is not standard marked "*" ("U+4E0D\tbu4 bu5 bu2 fou3* fou1* fu1*").
 */
export function unihanDump() {
  return execFileSync('/usr/bin/python3', ['-c', REFERENCE, UNIHAN], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

/** @type {Map<string, string[]> | null} */
let readings = null;
/** @type {Map<string, string[]> | null} */
let standardReadings = null;

function parseDump() {
  readings = new Map();
  standardReadings = new Map();
  for (const line of unihanDump().trimEnd().split('\n')) {
    const [cp, list] = line.split('\t');
    const char = String.fromCodePoint(parseInt(cp.slice(2), 16));
    const all = list.split(' ');
    readings.set(
      char,
      all.map((r) => r.replace('*', '')),
    );
    standardReadings.set(
      char,
      all.filter((r) => !r.endsWith('*')),
    );
  }
}

/** Character -> its readings ("shang4"), likeliest first. */
export function unihanReadings() {
  if (readings === null) parseDump();
  return /** @type {Map<string, string[]>} */ (readings);
}

/** Character -> its standard readings (modern Mandarin), likeliest first; may be empty. */
export function unihanStandardReadings() {
  if (standardReadings === null) parseDump();
  return /** @type {Map<string, string[]>} */ (standardReadings);
}

/**
 * "shang4" -> "shàng" by the standard rule (the mark goes on a or e; on the o of ou; else on the
 * last vowel); tone 5 (neutral) is unmarked.
 * @param {string} numbered
 */
export function withToneMark(numbered) {
  const tone = Number(numbered.slice(-1));
  const letters = numbered.slice(0, -1);
  if (tone === 5) return letters;
  const marks = {
    a: 'āáǎà',
    e: 'ēéěè',
    i: 'īíǐì',
    o: 'ōóǒò',
    u: 'ūúǔù',
    ü: 'ǖǘǚǜ',
    ê: ['ê̄', 'ế', 'ê̌', 'ề'],
    m: ['m̄', 'ḿ', 'm̌', 'm̀'],
    n: ['n̄', 'ń', 'ň', 'ǹ'],
  };
  const chars = [...letters];
  let at = chars.findIndex((c) => c === 'a' || c === 'e' || c === 'ê');
  if (at < 0) at = letters.includes('ou') ? letters.indexOf('ou') : -1;
  if (at < 0)
    for (let i = chars.length - 1; i >= 0; i--)
      if ('iouü'.includes(chars[i])) {
        at = i;
        break;
      }
  if (at < 0) at = chars.findIndex((c) => c === 'm' || c === 'n');
  if (at < 0) return numbered;
  chars[at] = [...marks[chars[at]]][tone - 1] ?? marks[chars[at]][tone - 1];
  return chars.join('');
}
