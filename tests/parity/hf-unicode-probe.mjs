// Dumps how the reference (npm `tokenizers`, HF's Rust code) classifies every Unicode
// scalar value, one TSV line per code point whose behaviour is not "plain character":
//   cp(hex)  clean(removed|space|-)  pretok(punct|space|-)  chinese(0|1)  lower(hex seq|-)  strip(hex seq|-)
// Used to check scripts/gen-unicode-tables against the reference, stage by stage.
// Usage: node tests/parity/hf-unicode-probe.mjs > /tmp/hf-unicode.tsv
import tokenizers from 'tokenizers';

const { bertNormalizer, bertPreTokenizer } = tokenizers;
const base = { cleanText: false, handleChineseChars: false, stripAccents: false, lowercase: false };
const clean = bertNormalizer({ ...base, cleanText: true });
const chinese = bertNormalizer({ ...base, handleChineseChars: true });
const lower = bertNormalizer({ ...base, lowercase: true });
const strip = bertNormalizer({ ...base, stripAccents: true });
const pre = bertPreTokenizer();

const hex = (s) => [...s].map((c) => c.codePointAt(0).toString(16)).join(' ');
const out = [];
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue; // not scalar values: unrepresentable in Rust strings
  const c = String.fromCodePoint(cp);
  const cleaned = clean.normalizeString(c);
  const cleanClass = cleaned === '' ? 'removed' : cleaned === ' ' && c !== ' ' ? 'space' : '-';
  const pieces = pre.preTokenizeString(`a${c}b`);
  const preClass = pieces.length === 3 ? 'punct' : pieces.length === 2 ? 'space' : '-';
  const isChinese = chinese.normalizeString(c) === ` ${c} ` ? 1 : 0;
  const lowered = lower.normalizeString(c);
  const stripped = strip.normalizeString(c);
  const row = [
    cleanClass,
    preClass,
    isChinese,
    lowered === c ? '-' : hex(lowered),
    stripped === c ? '-' : hex(stripped),
  ];
  if (row.join() !== '-,-,0,-,-') out.push(`${cp.toString(16)}\t${row.join('\t')}`);
}
process.stdout.write(out.join('\n') + '\n');
