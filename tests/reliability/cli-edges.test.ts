// The CLI's edges (RELIABILITY.md, "CLI edges"), each as a user meets it, with the spawned CLI and
// the tiny test model: a stdin that is a directory or unreadable, a stdout that fails (/dev/full)
// or closes (| head -c1), input that is not UTF-8 (GBK, GB18030, UTF-16 with and without a BOM, an
// argument in GBK), the echo of a long input and a 50 MB line, negative and non-numeric numbers,
// trailing empty lines, and messages in the CLI's flags rather than the API's option names.
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cli, run, type Run } from '../runtime/cli-run.js';
import { cliPath, missingPrerequisite, testMemoryModelDir, testModelDir } from '../runtime/fixtures.js';
import { modelVariant } from './helpers.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

/** The --json lines of a run. */
const jsonLines = (r: Run) =>
  r.stdout
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
const lines = (text: string) => text.split('\n').filter(Boolean);
/** API option names and type notes that must not reach a CLI user. */
const API_NAMES = /createFillMask|createTokenizer|topK|maxLength|\{ memory|joint: true|\(a string\)/;

const bytes = (...hex: string[]) => Buffer.from(hex.join('').replace(/ /g, ''), 'hex');
const utf8 = (text: string) => Buffer.from(text, 'utf8');
/** 今天天气真[MASK]啊 in GBK. */
const GBK_LINE = Buffer.concat([bytes('bd f1 cc ec cc ec c6 f8 d5 e6'), utf8('[MASK]'), bytes('b0 a1')]);
/** 😀[MASK] in GB18030 (a four-byte sequence). */
const GB18030_LINE = Buffer.concat([bytes('94 39 fc 36'), utf8('[MASK]')]);
/** café[MASK] in Latin-1. */
const LATIN1_LINE = Buffer.from('café[MASK]', 'latin1');

describe.skipIf(missing !== null)('tiankong CLI edges', () => {
  let model: string;
  let work: string;
  beforeAll(() => {
    model = testModelDir();
    work = mkdtempSync(join(tmpdir(), 'tiankong-cli-edges-'));
  });
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('stdin that is a directory or cannot be read: one line on stderr, exit 2', async () => {
    const unreadable = join(work, 'write-only.txt');
    writeFileSync(unreadable, '春[MASK]\n');
    for (const [path, flags, message] of [
      ['/', 'r', /^tiankong: stdin is a directory, not a file of lines; redirect a text file/],
      [unreadable, 'w', /^tiankong: cannot read stdin \(EBADF[^\n]*\); redirect a text file/],
    ] as const) {
      for (const args of [
        ['fill', '--json', '-m', model],
        ['tokenize', '-m', model],
      ]) {
        const fd = openSync(path, flags);
        try {
          const r = await cli(args, undefined, { stdin: fd });
          expect(r, `${args[0]} < ${path}`).toMatchObject({ status: 2, stdout: '' });
          expect(lines(r.stderr), `${args[0]} < ${path}`).toHaveLength(1);
          expect(r.stderr).toMatch(message);
        } finally {
          closeSync(fd);
        }
      }
    }
  });

  test.skipIf(!existsSync('/dev/full'))(
    'a stdout that fails (ENOSPC, > /dev/full): one line on stderr, exit 1',
    async () => {
      for (const args of [
        ['fill', '-m', model, '今天天气真[MASK]啊'],
        ['fill', '--json', '-m', model, '今天天气真[MASK]啊', '秋[MASK]'],
        ['tokenize', '-m', model, '床前明月光'],
      ]) {
        const fd = openSync('/dev/full', 'w');
        try {
          const r = await cli(args, undefined, { stdout: fd });
          expect(r.status, args.join(' ')).toBe(1);
          expect(r.stderr, args.join(' ')).toMatch(/^tiankong: cannot write the output: ENOSPC: [^\n]+\n$/);
        } finally {
          closeSync(fd);
        }
      }
    },
  );

  test('a closed pipe (| head -c1) ends the run quietly with the status so far', async () => {
    const input = Array.from({ length: 3000 }, (_, i) => `春[MASK]${i}`).join('\n');
    for (const command of ['fill --json', 'fill', 'tokenize']) {
      const r = await run(
        'bash',
        [
          '-c',
          `"$0" "$1" ${command} -m "$2" | head -c1 >/dev/null; exit "\${PIPESTATUS[0]}"`,
          process.execPath,
          cliPath,
          model,
        ],
        input,
      );
      expect(r, command).toMatchObject({ status: 0, stderr: '' });
    }
  });

  test('stdin lines that are not UTF-8: refused one by one (NOT_UTF8), naming the encoding and the iconv to run', async () => {
    const input = Buffer.concat(
      [utf8('春[MASK]'), GBK_LINE, LATIN1_LINE, GB18030_LINE, utf8('\uFFFD秋[MASK]')].flatMap((line) => [
        line,
        utf8('\n'),
      ]),
    );
    const r = await cli(['fill', '--json', '-m', model], input);
    expect(r.status).toBe(2);
    const out = jsonLines(r);
    expect(out.map((l) => l.error?.code ?? 'ok')).toEqual(['ok', 'NOT_UTF8', 'NOT_UTF8', 'NOT_UTF8', 'ok']);
    expect(out[1].text).toBe('\uFFFD'.repeat(10) + '[MASK]\uFFFD\uFFFD'); // shown as decoded, nothing filled
    expect(out[1].error.message).toMatch(
      /line is not UTF-8 text; it looks like GBK .*iconv -f GBK -t UTF-8 in\.txt > out\.txt/,
    );
    expect(out[2].error.message).toMatch(/line is not UTF-8 text \(bytes E9 at byte 3 are not UTF-8\).*iconv -f /);
    expect(out[2].error.message).not.toMatch(/GBK/);
    expect(out[3].error.message).toMatch(/looks like GB18030 .*iconv -f GB18030 -t UTF-8/);
    expect(out[4].text).toBe('\uFFFD秋[MASK]'); // a real U+FFFD is UTF-8 text
    expect(lines(r.stderr)).toEqual([
      expect.stringMatching(/^tiankong: line 2: .*GBK.*\[NOT_UTF8\]$/),
      expect.stringMatching(/^tiankong: line 3: .*\[NOT_UTF8\]$/),
      expect.stringMatching(/^tiankong: line 4: .*GB18030.*\[NOT_UTF8\]$/),
    ]);
    const tokens = await cli(['tokenize', '--json', '-m', model], Buffer.concat([GBK_LINE, utf8('\n床\n')]));
    expect(tokens.status).toBe(2);
    expect(jsonLines(tokens).map((l) => l.error?.code ?? 'ok')).toEqual(['NOT_UTF8', 'ok']);
  });

  test('UTF-16 stdin (byte-order mark, or NUL every other byte): every line refused as UTF-16 LE/BE', async () => {
    const text = '春[MASK]\r\n秋上[MASK]\r\n';
    const le = Buffer.from(`\uFEFF${text}`, 'utf16le');
    const be = Buffer.from(`\uFEFF${text}`, 'utf16le').swap16();
    const bare = Buffer.from(text, 'utf16le');
    for (const [input, name, iconv] of [
      [le, 'UTF-16 LE', 'UTF-16'],
      [be, 'UTF-16 BE', 'UTF-16'],
      [bare, 'UTF-16 LE', 'UTF-16LE'],
    ] as const) {
      const r = await cli(['fill', '--json', '-m', model], input);
      expect(r.status, name).toBe(2);
      const out = jsonLines(r);
      expect(out.map((l) => l.text)).toEqual(['春[MASK]', '秋上[MASK]']); // split as UTF-16 lines
      for (const line of out) {
        expect(line.error.code).toBe('NOT_UTF8');
        expect(line.error.message).toContain(`stdin is not UTF-8 text; it looks like ${name}`);
        expect(line.error.message).toContain(`iconv -f ${iconv} -t UTF-8 in.txt > out.txt`);
      }
      expect(lines(r.stderr)).toHaveLength(2);
    }
  });

  test.skipIf(!existsSync('/proc/self/cmdline'))(
    'an argument that is not UTF-8 is refused as a line would be',
    async () => {
      const gbk = [...GBK_LINE].map((b) => `\\x${b.toString(16)}`).join('');
      const r = await run('bash', [
        '-c',
        `exec "$0" "$1" fill --json -m "$2" "$(printf '${gbk}')" '秋[MASK]' '\uFFFD[MASK]'`,
        process.execPath,
        cliPath,
        model,
      ]);
      expect(r.status).toBe(2);
      const out = jsonLines(r);
      expect(out.map((l) => l.error?.code ?? 'ok')).toEqual(['NOT_UTF8', 'ok', 'ok']);
      expect(out[0].error.message).toMatch(/the argument is not UTF-8 text; it looks like GBK.*iconv -f GBK -t UTF-8/);
      expect(r.stderr).toMatch(/^tiankong: input 1: the argument is not UTF-8 text/);
    },
  );

  test('error objects echo at most the first 200 characters, with "textCut"', async () => {
    const long = `${'春'.repeat(5000)}[MASK]`; // TOO_LONG from the runtime
    const astral = '𠀀'.repeat(300); // the cut does not split a surrogate pair
    const noMask = `${'a'.repeat(299)} `; // one [UNK]: NO_MASK
    const r = await cli(['fill', '--json', '-m', model], [long, astral, noMask, '短'].join('\n'));
    expect(r.status).toBe(2);
    const out = jsonLines(r);
    expect(out.map((l) => l.error.code)).toEqual(['TOO_LONG', 'TOO_LONG', 'NO_MASK', 'NO_MASK']);
    expect(out[0]).toMatchObject({ text: '春'.repeat(200), textCut: true });
    expect(out[1]).toMatchObject({ text: '𠀀'.repeat(200), textCut: true });
    expect(out[2]).toMatchObject({ text: 'a'.repeat(200), textCut: true });
    expect(out[3]).toEqual({ text: '短', error: expect.anything() });
    expect(r.stderr.length).toBeLessThan(2000); // the messages do not echo the text
  });

  test('a 50 MB line: refused (TOO_LONG) as it streams past, echoed in 200 characters, without holding it', async () => {
    const huge = Buffer.concat([Buffer.alloc(50 * 2 ** 20, 'a'), utf8('[MASK]\n好[MASK]\n')]);
    // Peak memory (max RSS, KiB) from /usr/bin/time where it exists, against a one-line run.
    const time = existsSync('/usr/bin/time');
    const measured = (input: Buffer | string) =>
      time
        ? run('/usr/bin/time', ['-f', 'maxrss %M', process.execPath, cliPath, 'fill', '--json', '-m', model], input)
        : cli(['fill', '--json', '-m', model], input);
    const maxRss = (r: Run) => Number(/maxrss (\d+)\n$/.exec(r.stderr)?.[1]) * 1024;
    const r = await measured(huge);
    expect(r.status, r.stderr).toBe(2);
    const out = jsonLines(r);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({ text: 'a'.repeat(200), textCut: true, error: { code: 'TOO_LONG' } });
    expect(out[0].error.message).toMatch(/the line is 52428806 bytes long; a line longer than 1 MiB is not read/);
    expect(out[1].masks).toHaveLength(1); // the next line is filled as usual
    expect(r.stdout.length).toBeLessThan(5000);
    if (time) {
      const small = await measured('好[MASK]\n');
      // Was 1.6 GB and a wasm abort (the runtime tokenized all 50 MB); now the line is never held.
      expect(maxRss(r) - maxRss(small)).toBeLessThan(64 * 2 ** 20);
    }
  });

  test("negative or non-numeric numbers get the option's own message, not the parser's", async () => {
    const vocab = join(model, 'vocab.txt');
    const cases: [string[], RegExp][] = [
      [
        ['fill', '-k', '-3'],
        /^tiankong: -k\/--top-k must be a whole number from 1 to \d+ \(the vocabulary size\), got -3\n/,
      ],
      [
        ['fill', '--top-k=-3'],
        /^tiankong: -k\/--top-k must be a whole number from 1 to \d+ \(the vocabulary size\), got -3\n/,
      ],
      [
        ['fill', '-k', 'abc'],
        /^tiankong: -k\/--top-k must be a whole number from 1 to the vocabulary size, got 'abc'\n/,
      ],
      [['fill', '-k'], /^tiankong: -k\/--top-k needs a value: a whole number from 1 to the vocabulary size\n/],
      [['fill', '-k', '--json'], /^tiankong: -k\/--top-k needs a value/],
      [['fill', '--threshold', '-0.5'], /^tiankong: --threshold must be a probability from 0 to 1, got -0\.5\n/],
      [['fill', '--joint', '--beam', '-1'], /^tiankong: --beam must be a whole number from 1 to 32, got -1\n/],
      [['fill', '--threads', '-2'], /^tiankong: --threads must be a whole number from 1 to 64, got -2\n/],
    ];
    for (const [args, message] of cases) {
      const r = await cli([...args, '-m', model, '春[MASK]'], '');
      expect(r, args.join(' ')).toMatchObject({ status: 2, stdout: '', stderr: expect.stringMatching(message) });
      expect(r.stderr, args.join(' ')).not.toMatch(/ambiguous|argument missing/);
    }
    const maxLength = await cli(['tokenize', '--vocab', vocab, '--max-length', '-5', 'x']);
    expect(maxLength).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/^tiankong: --max-length must be a whole number from 2 to 1073741824, got -5\n/),
    });
    // The bounds the CLI names for a non-number are the runtime's, which it gives for a number out of range.
    const range = (r: Run) => /from \d+ to \d+/.exec(r.stderr)?.[0];
    for (const [option, over] of [
      [['fill', '-m', model, '--joint', '--beam'], '999'],
      [['fill', '-m', model, '--threads'], '999'],
      [['tokenize', '--vocab', vocab, '--max-length'], '1'],
    ] as const) {
      const word = await cli([...option, 'abc', '春[MASK]']);
      const number = await cli([...option, over, '春[MASK]']);
      expect(range(word), option.join(' ')).toBeDefined();
      expect(range(word), option.join(' ')).toBe(range(number));
    }
  });

  test('empty lines at the end of stdin are not inputs; empty lines between texts still are (EMPTY_INPUT)', async () => {
    for (const input of ['春[MASK]\n\n\n', '春[MASK]\r\n\r\n\r\n', '春[MASK]\n\n']) {
      const r = await cli(['fill', '--json', '-m', model], input);
      expect(r.status, JSON.stringify(input)).toBe(0);
      expect(jsonLines(r).map((l) => l.text)).toEqual(['春[MASK]']);
    }
    const middle = await cli(['fill', '--json', '-m', model], '春[MASK]\n\n秋[MASK]\n\n\n');
    expect(middle.status).toBe(2);
    expect(jsonLines(middle).map((l) => l.error?.code ?? 'ok')).toEqual(['ok', 'EMPTY_INPUT', 'ok']);
    expect(lines(middle.stderr)).toEqual([expect.stringMatching(/^tiankong: line 2: .*\[EMPTY_INPUT\]$/)]);
    // A line of spaces is text (whitespace), not an empty line: still an input.
    const spaces = await cli(['fill', '--json', '-m', model], '春[MASK]\n  \n');
    expect(jsonLines(spaces).map((l) => l.error?.code ?? 'ok')).toEqual(['ok', 'EMPTY_INPUT']);
    expect(await cli(['fill', '--json', '-m', model], '\n\n')).toMatchObject({ status: 0, stdout: '', stderr: '' });
    const tokens = await cli(['tokenize', '--json', '-m', model], '床\n\n');
    expect(tokens.status, tokens.stderr).toBe(0);
    expect(jsonLines(tokens)).toHaveLength(1);
  });

  test('messages name the CLI flags: --no-memory for a broken memory.bin, -k/--top-k, --threshold, …', async () => {
    const broken = modelVariant(testMemoryModelDir(), join(work, 'broken-memory'), (dir) => {
      const memory = readFileSync(join(dir, 'memory.bin'));
      memory[memory.length - 50]! ^= 0xff;
      writeFileSync(join(dir, 'memory.bin'), memory);
    });
    const bad = await cli(['fill', '-m', broken, '疑是地[MASK]霜']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/memory\.bin: .*checksum.*load the model without it: --no-memory\n$/);
    expect(bad.stderr).not.toMatch(API_NAMES);
    const alone = await cli(['fill', '--no-memory', '-m', broken, '疑是地[MASK]霜']);
    expect(alone.status, alone.stderr).toBe(0);

    const absent = modelVariant(testMemoryModelDir(), join(work, 'absent-memory'), (dir) =>
      rmSync(join(dir, 'memory.bin')),
    );
    const unread = await cli(['fill', '-m', absent, '疑是地[MASK]霜']);
    expect(unread.status).toBe(1);
    expect(unread.stderr).toMatch(/cannot read .*memory\.bin.*--no-memory skips the memory\)\n$/);
    expect(unread.stderr).not.toMatch(API_NAMES);

    const usage: [string[], string | RegExp][] = [
      [
        ['fill', '-k', '0'],
        /^tiankong: -k\/--top-k must be a whole number from 1 to \d+ \(the vocabulary size\), got 0\n/,
      ],
      [['fill', '--threshold', '2'], 'tiankong: --threshold must be a probability from 0 to 1, got 2\n'],
      [['fill', '--backend', 'gpu'], 'tiankong: --backend must be auto, wasm or webgpu, got "gpu"\n'],
      [['fill', '--filter', 'latin'], /^tiankong: --filter must be chinese or no-punctuation, got "latin"\n/],
      [['fill', '--threads', '0'], 'tiankong: --threads must be a whole number from 1 to 64, got 0\n'],
      [['fill', '--joint', '--beam', '99'], 'tiankong: --beam must be a whole number from 1 to 32, got 99\n'],
      [['fill', '-m', ''], /^tiankong: -m\/--model must name a model directory or URL, got an empty string\n/],
    ];
    for (const [args, message] of usage) {
      const r = await cli([...(args.includes('-m') ? [] : ['-m', model]), ...args, '春[MASK]'], '');
      expect(r.status, args.join(' ')).toBe(2);
      if (typeof message === 'string') expect(r.stderr.startsWith(message), r.stderr).toBe(true);
      else expect(r.stderr).toMatch(message);
      expect(r.stderr, args.join(' ')).not.toMatch(API_NAMES);
    }
    const maxLength = await cli(['tokenize', '--vocab', join(model, 'vocab.txt'), '--max-length', '1', 'x']);
    expect(maxLength.stderr).toMatch(/^tiankong: --max-length must be a whole number from 2 to \d+, got 1\n/);
    // TOO_LONG of tokenize names --truncate, on stderr and in the error object.
    const tooLong = await cli(['tokenize', '--json', '-m', model], `${'春'.repeat(200)}\n`);
    expect(tooLong.status).toBe(2);
    expect(tooLong.stderr).toMatch(/truncate explicitly \(tokenize --truncate\) \[TOO_LONG\]\n$/);
    expect(jsonLines(tooLong)[0].error.message).toMatch(/^tiankong: .*\(tokenize --truncate\)$/);
    expect(tooLong.stdout + tooLong.stderr).not.toMatch(API_NAMES);
  });
});
