// The CLI's inputs: the TEXT arguments, or the lines of stdin read as bytes. Each is checked to be
// UTF-8 text before it reaches the runtime, which takes strings: a GBK or UTF-16 file decoded as
// UTF-8 would silently become U+FFFD or NUL-riddled text and be "filled". An input is yielded as
// { text } or, when the CLI refuses it itself, { text, error: { code, message } } (text is then
// what can be shown of it).
import { fstatSync, readFileSync } from 'node:fs';

/** Error objects echo at most this many characters of an input (messages do not echo it at all). */
export const ECHO_CHARS = 200;
/**
 * The longest stdin line read whole, in bytes. A model reads a few hundred tokens, so a longer line
 * can only be refused; refusing it as it streams past keeps a huge line (or a file without a
 * newline) from being held in memory, and from outgrowing V8's longest string.
 */
export const MAX_LINE_BYTES = 2 ** 20;
const MAX_LINE_TEXT = '1 MiB';
/** What is kept of a line longer than MAX_LINE_BYTES: enough bytes for its echo. */
const HEAD_BYTES = 4 * ECHO_CHARS + 4;
/** Bytes looked at to tell a UTF-16 stdin from UTF-8 (its first line, or this much). */
const SNIFF_BYTES = 4096;

/** stdin cannot be read (a directory, a write-only descriptor): one message, exit status 2. */
export class InputError extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lossy = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The inputs of a run: `texts` (the TEXT arguments; `argumentIndexes[i]` is the position of texts[i]
 * in process.argv.slice(2)), or, when there are none, the lines of stdin. Throws InputError when
 * stdin cannot be read.
 */
export function inputs(texts, argumentIndexes, command) {
  return texts.length > 0 ? argumentInputs(texts, argumentIndexes) : stdinInputs(process.stdin, command);
}

/**
 * Throws InputError when stdin is a directory (Node then reads it as empty, so `tiankong fill < /`
 * would end silently with status 0) or cannot be examined.
 */
export function checkStdin(command) {
  let stats;
  try {
    stats = fstatSync(0);
  } catch (error) {
    throw new InputError(`cannot read stdin (${error.message}); ${stdinAdvice(command)}`);
  }
  if (stats.isDirectory()) throw new InputError(`stdin is a directory, not a file of lines; ${stdinAdvice(command)}`);
}

const stdinAdvice = (command) => `redirect a text file (tiankong ${command} < in.txt) or pass the texts as arguments`;

/** The first ECHO_CHARS characters (code points) of `text`, and whether that cut it. */
export function echo(text) {
  if (text.length <= ECHO_CHARS) return { text, cut: false };
  let end = 0;
  for (let n = 0; n < ECHO_CHARS && end < text.length; n++) {
    const high = text.charCodeAt(end);
    const low = text.charCodeAt(end + 1);
    end += high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? 2 : 1;
  }
  return { text: text.slice(0, end), cut: end < text.length };
}

// ---- arguments ----

/**
 * The TEXT arguments. Node decodes the command line as UTF-8 and turns bad bytes into U+FFFD before
 * the CLI sees them, so an argument holding U+FFFD is checked against its bytes in
 * /proc/self/cmdline; where that file does not exist (not Linux) it goes through as Node decoded it.
 */
function* argumentInputs(texts, argumentIndexes) {
  const raw = texts.some((text) => text.includes('\uFFFD')) ? rawArguments() : null;
  for (const [i, text] of texts.entries()) {
    const bytes = raw?.[argumentIndexes[i]];
    // The bytes must decode to what Node gave (else the command line was rewritten: trust Node).
    if (!text.includes('\uFFFD') || bytes === undefined || lossy.decode(bytes) !== text) {
      yield { text };
      continue;
    }
    yield isUtf8(bytes) ? { text } : { text, error: notUtf8('argument', encodingProblem(bytes)) };
  }
}

/** The bytes of this process's arguments after the script (process.argv.slice(2)), or null. */
function rawArguments() {
  let cmdline;
  try {
    cmdline = readFileSync('/proc/self/cmdline');
  } catch {
    return null;
  }
  const parts = [];
  for (let start = 0; start < cmdline.length;) {
    const end = cmdline.indexOf(0, start);
    parts.push(cmdline.subarray(start, end < 0 ? cmdline.length : end));
    start = end < 0 ? cmdline.length : end + 1;
  }
  const count = process.argv.length - 2;
  return parts.length >= count ? parts.slice(parts.length - count) : null;
}

// ---- stdin ----

/**
 * The lines of `stream` as inputs, as they arrive. UTF-8 lines split at \n (a \r before it and a
 * UTF-8 BOM at the start are dropped), each decoded on its own, so one bad line is refused
 * (NOT_UTF8, naming the likely encoding) and the others still run. A stream that starts like
 * UTF-16 (a byte-order mark, or NUL in every other byte) is split as UTF-16 and every line refused.
 * Empty lines at the end are not inputs (a file's trailing newlines); empty lines before a text
 * still are (EMPTY_INPUT), so --json output keeps lining up with the input lines.
 */
async function* stdinInputs(stream, command) {
  checkStdin(command);
  const chunks = readable(stream[Symbol.asyncIterator](), command);
  const head = await firstChunks(chunks);
  const start = Buffer.concat(head).subarray(0, SNIFF_BYTES);
  const order = utf16Order(start);
  const all = prepend(head, chunks);
  yield* withoutTrailingBlanks(order ? utf16Inputs(all, order, hasBom(start, order)) : utf8Inputs(all));
}

/** The chunks of a stream iterator; a read error is an InputError. */
async function* readable(iterator, command) {
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  } catch (error) {
    throw new InputError(`cannot read stdin (${error.message}); ${stdinAdvice(command)}`);
  }
}

/** The first chunks of `chunks`: up to a newline, SNIFF_BYTES bytes or the end (a terminal sends a line at a time). */
async function firstChunks(chunks) {
  const head = [];
  let bytes = 0;
  while (bytes < SNIFF_BYTES) {
    const next = await chunks.next();
    if (next.done) break;
    head.push(next.value);
    bytes += next.value.length;
    if (next.value.includes(0x0a)) break;
  }
  return head;
}

async function* prepend(head, rest) {
  yield* head;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/** Holds back empty lines until a non-empty one follows; drops those left at the end. */
async function* withoutTrailingBlanks(lines) {
  let held = 0;
  let blank = null; // every blank line of a stream gives the same input
  for await (const line of lines) {
    if (line.blank) {
      held++;
      blank = line.input;
      continue;
    }
    for (; held > 0; held--) yield blank;
    yield line.input;
  }
}

/** { input, blank } per UTF-8 line of `chunks`. */
async function* utf8Inputs(chunks) {
  let first = true;
  for await (const { bytes, length } of byteLines(chunks, MAX_LINE_BYTES)) {
    let line = bytes;
    if (first && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf) line = line.subarray(3);
    first = false;
    if (length > MAX_LINE_BYTES) {
      yield { input: { text: lossy.decode(line), error: tooLongLine(length) }, blank: false };
      continue;
    }
    if (line[line.length - 1] === 0x0d) line = line.subarray(0, -1);
    yield { input: utf8Input(line), blank: line.length === 0 };
  }
}

/** One line's input: its text, or NOT_UTF8 with the lossy decoding to show. */
function utf8Input(bytes) {
  let text;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { text: lossy.decode(bytes), error: notUtf8('line', encodingProblem(bytes)) };
  }
  // Valid UTF-8 can still be UTF-16 (ASCII in UTF-16 is NUL every other byte): checked only when NUL is there.
  const order = text.includes('\0') ? utf16Order(bytes) : null;
  return order ? { text, error: notUtf8('line', utf16Problem(order, false)) } : { text };
}

const tooLongLine = (length) => ({
  code: 'TOO_LONG',
  message:
    `tiankong: the line is ${length} bytes long; a line longer than ${MAX_LINE_TEXT} is not read ` +
    '(a model reads a few hundred tokens): shorten it to the sentence around the [MASK]',
});

/**
 * The lines of a byte stream split at \n, as { bytes, length }: the whole line, or only its first
 * HEAD_BYTES when it is longer than `maxBytes` (the rest is skipped as it arrives, so a huge line
 * costs at most `maxBytes` of memory). A line is copied once at most (when it spans chunks).
 */
async function* byteLines(chunks, maxBytes) {
  let parts = [];
  let length = 0;
  const add = (piece) => {
    if (piece.length === 0) return;
    if (length + piece.length <= maxBytes) parts.push(piece);
    else if (length <= maxBytes) parts = [Buffer.concat([...parts, piece], HEAD_BYTES)];
    length += piece.length;
  };
  const take = () => {
    const line = { bytes: parts.length === 1 ? parts[0] : Buffer.concat(parts), length };
    parts = [];
    length = 0;
    return line;
  };
  for await (const chunk of chunks) {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline >= 0; newline = chunk.indexOf(0x0a, start)) {
      add(chunk.subarray(start, newline));
      yield take();
      start = newline + 1;
    }
    add(chunk.subarray(start));
  }
  if (length > 0) yield take();
}

/**
 * { input, blank } per line of a UTF-16 stream: decoded as UTF-16 only to show which line it is
 * (at most 2 × ECHO_CHARS characters of a line are kept), each refused with NOT_UTF8.
 */
async function* utf16Inputs(chunks, order, bom) {
  const error = notUtf8('stdin', utf16Problem(order, bom));
  const decoder = new TextDecoder(order === 'LE' ? 'utf-16le' : 'utf-16be'); // drops the BOM
  const keep = 2 * ECHO_CHARS;
  let pending = '';
  const line = (text) => {
    const clean = text.endsWith('\r') ? text.slice(0, -1) : text;
    return { input: { text: clean, error }, blank: clean === '' };
  };
  for await (const chunk of chunks) {
    const pieces = (pending + decoder.decode(chunk, { stream: true })).split('\n');
    pending = pieces.pop().slice(0, keep);
    for (const piece of pieces) yield line(piece.slice(0, keep));
  }
  pending = (pending + decoder.decode()).slice(0, keep);
  if (pending !== '') yield line(pending);
}

// ---- what the bytes are ----

/**
 * 'LE' or 'BE' when `bytes` look like UTF-16: a byte-order mark (FF FE / FE FF) at the start, or
 * NUL in every other byte (what ASCII, [MASK] included, looks like in UTF-16). Else null.
 */
function utf16Order(bytes) {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'LE';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'BE';
  const n = Math.min(bytes.length, SNIFF_BYTES) & ~1;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < n; i++) {
    if (bytes[i] === 0) {
      if (i % 2 === 0) even++;
      else odd++;
    }
  }
  const enough = Math.max(2, n / 8); // a quarter of the code units at least
  if (odd >= enough && even <= odd / 8) return 'LE';
  if (even >= enough && odd <= even / 8) return 'BE';
  return null;
}

function isUtf8(bytes) {
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

const hasBom = (bytes, order) =>
  order === 'LE' ? bytes[0] === 0xff && bytes[1] === 0xfe : bytes[0] === 0xfe && bytes[1] === 0xff;

/** What `bytes` (not UTF-8) likely are: { encoding, why, from } (from: iconv's name, or null). */
function encodingProblem(bytes) {
  const order = utf16Order(bytes);
  if (order) return utf16Problem(order, hasBom(bytes, order));
  const gb = gbKind(bytes);
  if (gb) return { encoding: gb, why: `bytes ${hexSample(bytes, 0)} form ${gb} characters`, from: gb };
  const bad = firstBadByte(bytes);
  return { encoding: null, why: `bytes ${hexSample(bytes, bad)} at byte ${bad} are not UTF-8`, from: null };
}

function utf16Problem(order, bom) {
  return {
    encoding: `UTF-16 ${order}`,
    why: bom
      ? `it starts with the UTF-16 ${order} byte-order mark ${order === 'LE' ? 'FF FE' : 'FE FF'}`
      : `every other byte is NUL, as in UTF-16 ${order}`,
    from: bom ? 'UTF-16' : `UTF-16${order}`,
  };
}

/**
 * The NOT_UTF8 error of `what` ('line', 'argument', or 'stdin' for every line of a UTF-16 stream)
 * whose bytes are `problem`, with how to convert them.
 */
function notUtf8(what, { encoding, why, from }) {
  const convert = `iconv -f ${from ?? '<its encoding>'} -t UTF-8 in.txt > out.txt`;
  const fix =
    what === 'argument'
      ? `set the terminal (or the program passing it) to UTF-8, or convert the text: ${convert}`
      : `convert the file to UTF-8 first: ${convert}`;
  return {
    code: 'NOT_UTF8',
    message:
      `tiankong: ${what === 'stdin' ? 'stdin' : `the ${what}`} is not UTF-8 text` +
      `${encoding ? `; it looks like ${encoding}` : ''} (${why}); tiankong reads UTF-8 only: ${fix}`,
  };
}

/** The first run of non-ASCII bytes from `from` in hex (at most 8): what a message shows of bad bytes. */
function hexSample(bytes, from) {
  const start = Math.max(
    from,
    bytes.findIndex((b, i) => i >= from && b >= 0x80),
  );
  let end = start;
  while (end < bytes.length && bytes[end] >= 0x80 && end - start < 8) end++;
  const shown = [...bytes.subarray(start, end)].map((b) => b.toString(16).toUpperCase().padStart(2, '0'));
  return `${shown.join(' ')}${bytes[end] >= 0x80 ? ' …' : ''}`;
}

/** The offset of the first byte of `bytes` that is not UTF-8 (where the lossy decoding first put a U+FFFD of its own). */
function firstBadByte(bytes) {
  const text = lossy.decode(bytes);
  for (let at = text.indexOf('\uFFFD'); at >= 0; at = text.indexOf('\uFFFD', at + 1)) {
    const offset = Buffer.byteLength(text.slice(0, at));
    if (!(bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd)) return offset;
  }
  return 0;
}

/**
 * 'GBK' when every non-ASCII byte of `bytes` is part of a GBK double-byte character (lead 81–FE,
 * trail 40–FE but 7F) and most of those have a trail of 80 or more (as the common characters,
 * GB2312's A1–FE × A1–FE, do: a Latin-1 'é[' has the shape of one rare GBK character),
 * 'GB18030' when four-byte GB18030 sequences (81–FE 30–39 81–FE 30–39) appear too, else null.
 * A shape test (Big5 has the same shape and is named GBK too), run only on bytes that are not UTF-8.
 */
function gbKind(bytes) {
  let pairs = 0;
  let high = 0; // pairs whose trail byte is 80 or more
  let quads = 0;
  const between = (b, low, high) => b !== undefined && b >= low && b <= high;
  for (let i = 0; i < bytes.length;) {
    const lead = bytes[i];
    if (lead < 0x80) {
      i++;
      continue;
    }
    if (!between(lead, 0x81, 0xfe)) return null;
    const second = bytes[i + 1];
    if (between(second, 0x30, 0x39)) {
      if (!between(bytes[i + 2], 0x81, 0xfe) || !between(bytes[i + 3], 0x30, 0x39)) return null;
      quads++;
      i += 4;
    } else {
      if (!between(second, 0x40, 0xfe) || second === 0x7f) return null;
      pairs++;
      if (second >= 0x80) high++;
      i += 2;
    }
  }
  if (pairs + quads === 0 || high < pairs / 2) return null;
  return quads > 0 ? 'GB18030' : 'GBK';
}
