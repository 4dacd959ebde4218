/**
 * What the editor highlights: masks (in every spelling the tokenizer accepts) and
 * characters a user cannot see or would not mean to type. Pure functions of the text.
 */

/** One highlighted range of the text, UTF-16 offsets, half-open. */
export interface Mark {
  start: number;
  end: number;
  kind: 'mask' | 'suspicious';
  /** For suspicious characters: what it is, in Chinese, with its code point (tooltip text). */
  label?: string;
  /** True for characters that take no width on screen (zero-width, controls). */
  zeroWidth?: boolean;
}

// Mirrors the C++ tokenizer's forgiving mask (wasm/src/special_tokens.cc): ASCII, full-width or
// lenticular (【】, what a Chinese keyboard types) brackets around M-A-S-K in ASCII or full-width
// Latin letters, any case; optionally a sound constraint after ":" or "：" of at most 16
// characters without brackets or line breaks ([MASK:shang4], 【MASK：平】), as the core delimits it.
const MASK_PATTERN = /[[［【][MmＭｍ][AaＡａ][SsＳｓ][KkＫｋ](?:[:：][^[\]［］【】\n]{0,16})?[\]］】]/gu;

/** Every mask in `text`, in order. */
export function findMasks(text: string): Mark[] {
  return [...text.matchAll(MASK_PATTERN)].map((m) => ({ start: m.index, end: m.index + m[0].length, kind: 'mask' }));
}

const NAMED: Record<number, string> = {
  0x00a0: '不换行空格',
  0x00ad: '软连字符',
  0x180e: '蒙古文元音分隔符',
  0x200b: '零宽空格',
  0x200c: '零宽不连字',
  0x200d: '零宽连字',
  0x200e: '从左到右标记',
  0x200f: '从右到左标记',
  0x2028: '行分隔符',
  0x2029: '段落分隔符',
  0x2060: '词连接符',
  0x3000: '全角空格',
  0xfeff: '零宽不换行空格（BOM）',
  0xfffd: '替换字符（乱码）',
};

// Format/control characters, unusual spaces, private use, and the replacement character.
// Plain space, tab and newline are ordinary; so are the variation selectors of emoji.
const SUSPICIOUS_PATTERN = /[\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\p{Co}\uFFFD]/gu;
const ORDINARY = new Set([0x20, 0x09, 0x0a, 0x0d]);

function describeCodePoint(cp: number): string {
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const name =
    NAMED[cp] ??
    (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)
      ? '控制字符'
      : cp >= 0x202a && cp <= 0x202e
        ? '文字方向控制符'
        : cp >= 0x2066 && cp <= 0x2069
          ? '文字方向隔离符'
          : /\p{Zs}/u.test(String.fromCodePoint(cp))
            ? '特殊空格'
            : /\p{Co}/u.test(String.fromCodePoint(cp))
              ? '私用区字符'
              : '不可见格式字符');
  return `${name} ${hex}`;
}

/** Characters in `text` that are invisible or unusual (see SUSPICIOUS_PATTERN), in order. */
export function findSuspicious(text: string): Mark[] {
  const marks: Mark[] = [];
  for (const m of text.matchAll(SUSPICIOUS_PATTERN)) {
    const cp = m[0].codePointAt(0)!;
    if (ORDINARY.has(cp)) continue;
    const visibleWidth = /\p{Zs}/u.test(m[0]) || cp === 0xfffd || /\p{Co}/u.test(m[0]);
    marks.push({
      start: m.index,
      end: m.index + m[0].length,
      kind: 'suspicious',
      label: describeCodePoint(cp),
      zeroWidth: !visibleWidth,
    });
  }
  return marks;
}

/** Masks and suspicious characters together, sorted by position (they never overlap). */
export function findMarks(text: string): Mark[] {
  return [...findMasks(text), ...findSuspicious(text)].sort((a, b) => a.start - b.start);
}

/**
 * The text with suspicious characters removed, unusual spaces turned into plain spaces and
 * line/paragraph separators into newlines.
 */
export function cleanSuspicious(text: string): string {
  let out = '';
  let last = 0;
  for (const mark of findSuspicious(text)) {
    const ch = text.slice(mark.start, mark.end);
    out += text.slice(last, mark.start);
    if (/[\u2028\u2029]/.test(ch)) out += '\n';
    else if (/\p{Zs}/u.test(ch)) out += ' ';
    last = mark.end;
  }
  return out + text.slice(last);
}

/** Whether a cut `cut` UTF-16 units into `text` falls inside a surrogate pair (where no cut may go). */
export function splitsPair(text: string, cut: number): boolean {
  const c = text.charCodeAt(cut);
  const p = text.charCodeAt(cut - 1);
  return c >= 0xdc00 && c <= 0xdfff && p >= 0xd800 && p <= 0xdbff;
}

/** The text's first `limit` UTF-16 units, never ending inside a surrogate pair. */
export function headOf(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return text.slice(0, splitsPair(text, limit) ? limit - 1 : limit);
}
