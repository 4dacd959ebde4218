#!/usr/bin/env node
// tiankong CLI: a thin shell over the package API in dist/ (build it with scripts/build).
//   tiankong fill [options] [TEXT ...]      fill every [MASK] (stdin lines when no TEXT)
//   tiankong check [options] [TEXT ...]     spelling check (纠错): likely wrong characters and fixes
//   tiankong tokenize [options] [TEXT ...]  BERT WordPiece tokens, ids and offsets
// Exit codes: 0 ok, 1 the model or vocab could not be loaded or the output could not be written,
// 2 bad usage or an unreadable stdin (reported once, before any input is read) or some inputs
// were bad (the other lines are still processed and printed; with --json every input line gets
// exactly one output line, an error object for a bad one). A closed stdout (`| head -1`) ends
// the run quietly with the status it had so far. Inputs are UTF-8 (cli-input.js).
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { InputError, checkStdin, echo, inputs } from './cli-input.js';

const HELP = `tiankong — Chinese fill-in-the-blank (BERT masked-language model)

Usage:
  tiankong fill [-m DIR] [-k N] [--threshold P] [--filter F] [--no-memory] [--joint [--beam N]] [--explain] [--json] [TEXT ...]
  tiankong check [-m DIR] [--sensitivity S] [--keep W,W,...] [--no-memory] [--json] [TEXT ...]
  tiankong tokenize [--vocab PATH [--lowercase] [--max-length N] | -m DIR] [--truncate] [--json] [TEXT ...]
  tiankong --help | --version

A [MASK] may say how it sounds: [MASK:shang] (that syllable, any tone), [MASK:shang4] or
[MASK:shàng] (that tone; ü as ü, v or u:), [MASK:平] / [MASK:仄] (tones 1-2 / 3-4 of 中华新韵; a
polyphone matches if any reading does). Candidates show their pinyin, likeliest reading first.

Each TEXT (or, without TEXT, each line of stdin) is one input, in UTF-8 (a line or argument in
another encoding, e.g. GBK or UTF-16, is refused with NOT_UTF8 and how to convert it). Empty
lines at the end of stdin are not inputs; a line longer than 1 MiB is refused (TOO_LONG) unread.

fill:
  -m, --model DIR   model directory (model.json, model.onnx, vocab.txt); default: the packaged model
  -k, --top-k N     candidates per [MASK] (default 5)
  --threshold P     hide candidates (and --joint words) with probability below P (0..1, default 0)
  --filter F        chinese | no-punctuation
  --no-memory       the model alone: do not load or use the corpus memory (famous lines, idioms,
                    frequent phrases; a candidate it supports shows its source, 出处)
  --backend B       auto | wasm (default auto: onnxruntime-node when installed)
  --threads N       inference threads
  --joint           also fill each run of adjacent [MASK]s as a whole word (words: beam search,
                    most confident mask first; score = product of the conditional probabilities)
  --beam N          beam width of --joint (1 = greedy iterative filling, default 5)
  --explain         for the top candidate of each [MASK], score every context token by how much
                    the candidate's log-probability drops when that token is masked (heatmap;
                    coloured on a terminal, NO_COLOR=1 turns colour off)
  --json            one JSON line per input: the object the API's fill() returns (with --explain
                    also "explanations": explain() of each mask's top candidate), or for a bad
                    input {"text": …, "error": {"code": …, "message": …}} (text: the first 200
                    characters of the input, with "textCut": true when it is longer)

check:
  -m, --model DIR   model directory (default: the packaged model)
  --sensitivity S   how readily a character is flagged, 0..1 (default 0.5, the tuned threshold;
                    higher finds more errors and raises more false alarms)
  --keep W,W,...    characters or words never flagged (names, terms), comma-separated
  --no-memory       score with the model alone
  --backend B, --threads N   as for fill
  --json            one JSON line per input: the object the API's check() returns, or an error
                    object for a bad input (as for fill)
  On a terminal the text is shown with each flagged character and its fix ([门→们] without
  colour), then one line per fix: its kind (sound, shape or context), score and the candidates
  with their pinyin. Numbers, Latin text and punctuation are never flagged.

tokenize:
  -m, --model DIR   use the model's vocab, tokenizer settings and max length (default: the
                    packaged model, when neither --vocab nor --model is given)
  --vocab PATH      a BERT vocab.txt (one token per line) instead
  --lowercase       lowercase and strip accents (uncased BERT vocabularies; with --vocab)
  --max-length N    longest encoding with [CLS] and [SEP] (with --vocab; default 512)
  --truncate        keep the first tokens of a longer text (reported as "truncated") instead of
                    rejecting it with TOO_LONG as fill does
  --json            {"tokens":[...],"ids":[...],"offsets":[[start,end],...]} per input (UTF-16
                    offsets), or {"text": …, "error": {…}} for a bad input

Exit status: 0 ok, 1 the model or vocab could not be loaded or the output could not be written,
2 bad usage, an unreadable stdin or bad input lines.

Examples:
  tiankong fill "春眠不觉晓，处处闻啼[MASK]。"
  tiankong fill -k 3 --json "床前明月光，疑是地[MASK]霜。"
  tiankong check "我门再接再励，以经快完成了"
  tiankong tokenize "床前明月光"
`;

const OPTIONS = {
  model: { type: 'string', short: 'm' },
  'top-k': { type: 'string', short: 'k' },
  threshold: { type: 'string' },
  filter: { type: 'string' },
  backend: { type: 'string' },
  threads: { type: 'string' },
  json: { type: 'boolean' },
  vocab: { type: 'string' },
  joint: { type: 'boolean' },
  beam: { type: 'string' },
  explain: { type: 'boolean' },
  lowercase: { type: 'boolean' },
  'max-length': { type: 'string' },
  truncate: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  'no-memory': { type: 'boolean' },
  sensitivity: { type: 'string' },
  keep: { type: 'string' },
};
/** The options of each command besides -m, --json, --help, --version (another command's is a usage error). */
const ONLY = {
  fill: ['top-k', 'threshold', 'filter', 'backend', 'threads', 'joint', 'beam', 'explain', 'no-memory'],
  check: ['sensitivity', 'keep', 'backend', 'threads', 'no-memory'],
  tokenize: ['vocab', 'lowercase', 'max-length', 'truncate'],
};
const COMMANDS = Object.keys(ONLY);

/** Bad usage: reported once, exit status 2. */
class UsageError extends Error {}
/** The model or vocab could not be loaded: exit status 1. */
class LoadError extends Error {}

// A reader that goes away (`tiankong fill … | head -1`) closes the pipe: stop quietly, with the
// status the run had so far, instead of an EPIPE stack trace (and without filling the rest).
// Any other write failure (ENOSPC, EIO: `> /dev/full`) loses output, so it is said, once, and
// the status is 1; the rest is not filled either.
process.stdout.on('error', (error) => {
  if (error.code !== 'EPIPE') {
    process.stderr.write(`tiankong: cannot write the output: ${error.message}\n`);
    process.exitCode = 1;
  }
  process.exit();
});
const out = (text) => void process.stdout.write(text);

async function main(argv) {
  const { args, from } = attachNumbers(argv);
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, tokens: true });
  } catch (error) {
    throw new UsageError(error.message);
  }
  const { values, positionals, tokens } = parsed;
  const [command, ...texts] = positionals;
  // Where each TEXT was on the command line (cli-input.js reads its bytes from there).
  const textIndexes = tokens
    .filter((token) => token.kind === 'positional')
    .slice(1)
    .map((token) => from[token.index]);
  if (values.help || command === 'help') return void out(HELP);
  if (values.version || command === 'version') return void out(`tiankong ${packageVersion()}\n`);
  if (!COMMANDS.includes(command)) {
    throw new UsageError(
      command === undefined
        ? 'missing command (fill, check or tokenize)'
        : `unknown command '${command}' (expected fill, check or tokenize)`,
    );
  }
  const misplaced = COMMANDS.flatMap((c) => ONLY[c]).find(
    (name) => values[name] !== undefined && !ONLY[command].includes(name),
  );
  if (misplaced) {
    const owners = COMMANDS.filter((c) => ONLY[c].includes(misplaced)).map((c) => `tiankong ${c}`);
    throw new UsageError(`--${misplaced} is an option of ${owners.join(' and ')}, not of tiankong ${command}`);
  }
  const run = { texts, textIndexes, command };
  return { fill, check, tokenize }[command](values, run);
}

function packageVersion() {
  return JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
}

/**
 * The numeric options, as messages spell them, and the value each takes: its own message when the
 * value is not a number at all. The bounds are the runtime's (web/src/engine/options.ts,
 * tokenize.ts), whose message, in these names (CLI_NAMES), gives them for a number out of range.
 */
const NUMBERS = {
  'top-k': { flag: '-k/--top-k', value: 'a whole number from 1 to the vocabulary size' },
  threshold: { flag: '--threshold', value: 'a probability from 0 to 1' },
  beam: { flag: '--beam', value: 'a whole number from 1 to 32' },
  threads: { flag: '--threads', value: 'a whole number from 1 to 64' },
  sensitivity: { flag: '--sensitivity', value: 'a number from 0 to 1' },
  'max-length': { flag: '--max-length', value: 'a whole number from 2 to 1073741824' },
};
/** Option names by their short letter (k → top-k). */
const SHORT = Object.fromEntries(
  Object.entries(OPTIONS)
    .filter(([, option]) => option.short)
    .map(([name, option]) => [option.short, name]),
);

/**
 * argv with the value of each numeric option attached (`-k -3` → `--top-k=-3`), and `from[i]`,
 * the position in argv of args[i]. parseArgs refuses a value that starts with '-' ("argument is
 * ambiguous"), so a negative number never reached the option's own check. A numeric option
 * followed by nothing or by another option is a usage error naming the value it takes.
 */
function attachNumbers(argv) {
  const args = [];
  const from = [];
  const keep = (i) => void (args.push(argv[i]), from.push(i));
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--') {
      for (; i < argv.length; i++) keep(i);
      break;
    }
    const name = optionName(argv[i]);
    if (OPTIONS[name]?.type !== 'string') {
      keep(i);
      continue;
    }
    const next = argv[i + 1];
    if (!NUMBERS[name]) {
      // The next argument is its value, as parseArgs takes it (so `-m -k` is not read as -k).
      keep(i);
      if (next !== undefined) keep(++i);
      continue;
    }
    if (next === undefined || /^-(-[a-z]|[a-zA-Z])/.test(next)) {
      throw new UsageError(`${NUMBERS[name].flag} needs a value: ${NUMBERS[name].value}`);
    }
    args.push(`--${name}=${next}`);
    from.push(++i);
  }
  return { args, from };
}

/** The option an argument names without a value ('--top-k', '-k' → 'top-k'), or undefined. */
const optionName = (arg) => (/^--[a-z-]+$/.test(arg) ? arg.slice(2) : SHORT[/^-([a-zA-Z])$/.exec(arg)?.[1]]);

/** A numeric option, or undefined; anything but a plain decimal number is a usage error. */
function number(values, name) {
  const text = values[name];
  if (text === undefined) return undefined;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text.trim()))
    throw new UsageError(`${NUMBERS[name].flag} must be ${NUMBERS[name].value}, got '${text}'`);
  return Number(text);
}

const isTiankongError = (error) => error?.name === 'TiankongError' && typeof error.code === 'string';

/**
 * The runtime's option names in its messages, as the CLI spells them. The CLI reports the
 * runtime's own messages (one wording for both), but its user has flags, not createFillMask
 * options: a message telling them to pass `{ memory: false }` leaves them stuck.
 */
const CLI_NAMES = [
  // "(createFillMask({ model: DIR }), CLI: --model DIR)" → "(--model DIR)"
  [/\((?:[^()]|\([^()]*\))*?, CLI: ([^()]*)\)/g, '($1)'],
  [/createFillMask\(\{ memory: false \}\)/g, '--no-memory'],
  [/^topK must be an integer/, '-k/--top-k must be a whole number'],
  [/^threshold must be/, '--threshold must be'],
  [/^sensitivity must be/, '--sensitivity must be'],
  [/^keep\[(\d+)\] must be/, '--keep entry $1 must be'],
  [/^beam must be an integer/, '--beam must be a whole number'],
  [/^threads must be an integer/, '--threads must be a whole number'],
  [/^maxLength must be an integer/, '--max-length must be a whole number'],
  [/^backend must be 'auto', 'wasm' or 'webgpu'/, '--backend must be auto, wasm or webgpu'],
  [/^filter must be 'chinese', 'no-punctuation' or \{[^}]*\}/, '--filter must be chinese or no-punctuation'],
  [/^model must name a model directory or URL/, '-m/--model must name a model directory or URL'],
  // Every option value of the CLI is a string: the API's type note says nothing here.
  [/(got "(?:[^"\\]|\\.)*") \(a string\)/g, '$1'],
];

/** A runtime message as the CLI shows it: without the 'tiankong: ' prefix, in the CLI's names (CLI_NAMES). */
const plain = (message) =>
  CLI_NAMES.reduce((text, [pattern, name]) => text.replace(pattern, name), message.replace(/^tiankong: /, ''));

/** Errors of one input: reported for that input, the run goes on (exit status 2). */
const INPUT_ERRORS = new Set(['EMPTY_INPUT', 'NO_MASK', 'TOO_LONG', 'NOT_UTF8', 'BAD_INPUT']);

/**
 * Runs `each` on the text of every input. A bad input (refused by the CLI, e.g. NOT_UTF8, or by
 * the runtime) is reported on stderr (and, with `json`, as an error object on its own stdout
 * line) and turns the exit status to 2; BAD_OPTION is bad usage (once); anything else ends the run.
 */
async function forEachInput({ texts, textIndexes, command }, json, each) {
  let number = 0;
  for await (const input of inputs(texts, textIndexes, command)) {
    number++;
    const where = texts.length > 0 ? `input ${number}` : `line ${number}`;
    if (input.error) {
      reportBadInput(where, input.text, input.error, json);
      continue;
    }
    try {
      await each(input.text);
    } catch (error) {
      if (!isTiankongError(error)) throw error;
      if (error.code === 'BAD_OPTION') throw new UsageError(plain(error.message));
      if (!INPUT_ERRORS.has(error.code)) throw new LoadError(error.message);
      reportBadInput(where, input.text, error, json);
    }
  }
}

/**
 * Reports one bad input: its message on stderr and, with `json`, its error object, echoing at
 * most the first ECHO_CHARS characters of the text (a 50 MB line is not written back whole).
 */
function reportBadInput(where, text, { code, message }, json) {
  process.stderr.write(`tiankong: ${where}: ${plain(message)} [${code}]\n`);
  if (json) {
    const shown = echo(text);
    const cut = shown.cut ? { textCut: true } : {};
    out(`${JSON.stringify({ text: shown.text, ...cut, error: { code, message: `tiankong: ${plain(message)}` } })}\n`);
  }
  process.exitCode = 2;
}

/** A load failure: bad options are usage (2), anything else could not be loaded (1). */
function loadFailure(error) {
  if (isTiankongError(error) && error.code === 'BAD_OPTION') return new UsageError(plain(error.message));
  return isTiankongError(error) ? new LoadError(error.message) : error;
}

/** The model of fill and check: -m, --backend, --threads, --no-memory (a load failure: loadFailure). */
async function openModel(values) {
  const { createFillMask } = await import('../dist/index.js');
  return createFillMask({
    model: values.model,
    backend: values.backend,
    threads: number(values, 'threads'),
    ...(values['no-memory'] ? { memory: false } : {}),
  }).catch((error) => {
    throw loadFailure(error);
  });
}

async function fill(values, run) {
  const options = {
    topK: number(values, 'top-k'),
    threshold: number(values, 'threshold'),
    filter: values.filter,
    ...(values.joint ? { joint: true } : {}),
    beam: number(values, 'beam'),
  };
  if (options.beam !== undefined && !values.joint) throw new UsageError('--beam needs --joint');
  if (run.texts.length === 0) checkStdin(run.command); // before the model loads
  const tk = await openModel(values);
  try {
    // The options are checked before any input is read (options come before the text: '' is
    // EMPTY_INPUT when they are fine), so a bad option is one usage error, not one per line.
    await tk.fill('', options).catch((error) => {
      if (isTiankongError(error) && error.code === 'BAD_OPTION') throw new UsageError(plain(error.message));
    });
    await forEachInput(run, values.json, async (text) => {
      const result = await tk.fill(text, options);
      if (!values.explain) return out(values.json ? `${JSON.stringify(result)}\n` : formatFill(result));
      const explanations = [];
      for (const mask of result.masks) {
        if (mask.candidates.length > 0) explanations.push(await tk.explain(text, mask.index, mask.candidates[0].token));
      }
      out(
        values.json
          ? `${JSON.stringify({ ...result, explanations })}\n`
          : formatFill(
              result,
              explanations.map((e) => formatExplain(e, useColour())),
            ),
      );
    });
  } finally {
    await tk.dispose();
  }
}

async function check(values, run) {
  const keep = values.keep === undefined ? undefined : values.keep.split(',').filter((w) => w.trim() !== '');
  if (values.keep !== undefined && keep.length === 0) {
    throw new UsageError('--keep needs characters or words separated by commas, e.g. --keep 张三,李四');
  }
  const options = { sensitivity: number(values, 'sensitivity'), ...(keep ? { keep } : {}) };
  if (run.texts.length === 0) checkStdin(run.command); // before the model loads
  const tk = await openModel(values);
  try {
    // The options are checked once, before any input is read ('' has nothing to check).
    await tk.check('', options).catch((error) => {
      if (isTiankongError(error) && error.code === 'BAD_OPTION') throw new UsageError(plain(error.message));
      throw error;
    });
    await forEachInput(run, values.json, async (text) => {
      const result = await tk.check(text, options);
      out(values.json ? `${JSON.stringify(result)}\n` : formatCheck(result, useColour()));
    });
  } finally {
    await tk.dispose();
  }
}

/**
 * A check result for people: the text with each flagged character and its fix (red → green on
 * a terminal, [门→们] otherwise), the corrected text, then one line per fix.
 */
function formatCheck(result, colour) {
  const { text, corrections } = result;
  if (corrections.length === 0) return `${text}\n  no likely wrong characters (${result.checked} checked)\n\n`;
  let marked = '';
  let at = 0;
  for (const c of corrections) {
    marked += text.slice(at, c.start);
    marked += colour
      ? `\x1b[9;31m${c.original}\x1b[0m\x1b[1;32m${c.suggestion}\x1b[0m`
      : `[${c.original}→${c.suggestion}]`;
    at = c.end;
  }
  marked += text.slice(at);
  const lines = [marked, `  → ${result.corrected}`];
  for (const c of corrections) {
    const candidates = c.candidates.map((k) => `${k.token}${readings(k.pinyin)} ${(100 * k.score).toFixed(1)}%`);
    lines.push(`  ${c.original}→${c.suggestion} at ${c.start}–${c.end} (${c.kind}): ${candidates.join(', ')}`);
  }
  return `${lines.join('\n')}\n\n`;
}

/** The fill table; `explained[i]` (lines) is printed under mask i when given. */
function formatFill(result, explained = []) {
  const lines = [result.text];
  for (const mask of result.masks) {
    const constraint = mask.constraint ? ` sounding ${mask.constraint}` : '';
    lines.push(
      `  [MASK] #${mask.index + 1} at ${mask.start}–${mask.end}${constraint}${result.cached ? ' (cached)' : ''}`,
    );
    mask.candidates.forEach((c, rank) => {
      lines.push(
        `    ${String(rank + 1).padStart(2)}  ${c.token}${readings(c.pinyin)}\t${(100 * c.score).toFixed(2).padStart(6)}%  ${c.sequence}`,
      );
      if (c.source) lines.push(`          出处: ${formatSource(c.source)}`);
    });
    lines.push(`        other\t${(100 * mask.other).toFixed(2).padStart(6)}%`);
    if (explained[mask.index]) lines.push(...explained[mask.index]);
  }
  for (const [w, word] of (result.words ?? []).entries()) {
    lines.push(
      `  word #${w + 1}: [MASK] #${word.maskIndices.map((i) => i + 1).join('–#')} at ${word.start}–${word.end} (joint)`,
    );
    word.candidates.forEach((c, rank) => {
      lines.push(
        `    ${String(rank + 1).padStart(2)}  ${c.text}${readings([c.pinyin.join(' ')])}\t${percent(c.score)}  ${c.sequence}`,
      );
    });
  }
  return `${lines.join('\n')}\n\n`;
}

/** " shàng/shang/shǎng" (at most three readings, likeliest first), "" for a token without one. */
function readings(pinyin) {
  const shown = (pinyin ?? []).filter((r) => r.trim() !== '').slice(0, 3);
  return shown.length ? ` ${shown.join('/')}` : '';
}

/** 李白《静夜思》（千家诗）：床前明月光，疑是地上霜。 — or 成语 丢三落四 diū sān là sì */
function formatSource({ work, title, author, text, pinyin }) {
  if (work === '成语') return `成语 ${title}${pinyin ? ` ${pinyin}` : ''}`;
  return `${author}${title ? `《${title}》` : ''}${work ? `（${work}）` : ''}：${text}`;
}

const useColour = () => process.stdout.isTTY === true && !process.env.NO_COLOR;
const BARS = '▁▂▃▄▅▆▇█';
/** xterm-256 backgrounds, faint to strong: red = supports the candidate, blue = works against it. */
const RED = [52, 88, 124, 160, 196];
const BLUE = [17, 18, 19, 20, 21];
/** A probability as a percentage, or in scientific notation when it would print as 0.00%. */
const percent = (p) => (p >= 5e-5 ? `${(100 * p).toFixed(2)}%` : p.toExponential(2)).padStart(9);

/**
 * Lines showing an explain() result: the text as tokens, each followed by a bar (positive
 * score, scaled to the largest |score|) or '-' (negative), or coloured (red = supports,
 * blue = works against, top 3 bold underlined) on a terminal; then the top 3 with scores.
 */
function formatExplain(explanation, colour) {
  const { tokens, top } = explanation;
  const scale = Math.max(1e-12, ...tokens.map((t) => Math.abs(t.score ?? 0)));
  const heat = tokens.map((t, i) => {
    const text = t.token.replace(/^##/, '');
    if (t.score === null) return text;
    const level = t.score / scale;
    if (!colour) return `${text}${level > 0 ? BARS[Math.min(7, Math.floor(level * 8))] : '-'}`;
    const step = Math.min(5, Math.round(Math.abs(level) * 5));
    const emphasis = top.includes(i) ? '\x1b[1;4m' : '';
    if (step === 0) return `${emphasis}${text}\x1b[0m`;
    return `\x1b[48;5;${(level > 0 ? RED : BLUE)[step - 1]}m\x1b[97m${emphasis}${text}\x1b[0m`;
  });
  const best = top.map((i) => `${tokens[i].token} ${tokens[i].score >= 0 ? '+' : ''}${tokens[i].score.toFixed(3)}`);
  return [
    `    explain ${explanation.token} (log P ${explanation.logProb.toFixed(3)}; score = drop in log P when the token is [MASK]ed):`,
    `      ${heat.join(colour ? '' : ' ')}`,
    `      top: ${best.length > 0 ? best.join(', ') : '(no token supports it)'}`,
  ];
}

/** The tokenizer settings of the model directory `dir` (its model.json), or a LoadError. */
async function modelTokenizerSettings(dir) {
  const found = await stat(dir).catch(() => null);
  if (found === null)
    throw new LoadError(`model directory ${dir} does not exist; pass the folder written by scripts/export-model`);
  if (!found.isDirectory()) {
    throw new LoadError(
      `${dir} is a file, not a model directory (a folder holding model.json, model.onnx and vocab.txt)` +
        (basename(dir) === 'model.json' ? `; pass the folder that holds it: ${dirname(dir)}` : ''),
    );
  }
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
  } catch (error) {
    throw new LoadError(`cannot read ${join(dir, 'model.json')}: ${error.message}`);
  }
  const vocab = manifest?.tokenizer?.vocab;
  // The same rule as the runtime's (model/manifest.ts): a plain name inside the directory.
  if (typeof vocab !== 'string' || !/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/.test(vocab)) {
    throw new LoadError(
      `${join(dir, 'model.json')}: tokenizer.vocab is ${JSON.stringify(vocab)}, which is not a file name ` +
        'inside the model directory',
    );
  }
  if (!Number.isInteger(manifest.max_length) || manifest.max_length < 3) {
    throw new LoadError(`${join(dir, 'model.json')}: max_length must be an integer ≥ 3`);
  }
  return {
    vocabPath: join(dir, vocab),
    lowercase: manifest.tokenizer.lowercase === true,
    maxLength: manifest.max_length,
  };
}

async function tokenize(values, run) {
  const { createTokenizer, DEFAULT_MODEL_DIR } = await import('../dist/index.js');
  if (values.vocab !== undefined && values.model !== undefined)
    throw new UsageError('tokenize takes --vocab PATH or --model DIR, not both');
  let settings;
  if (values.vocab !== undefined) {
    settings = {
      vocabPath: values.vocab,
      lowercase: values.lowercase ?? false,
      maxLength: number(values, 'max-length') ?? 512,
    };
  } else {
    if (values.lowercase !== undefined || values['max-length'] !== undefined) {
      throw new UsageError(
        `--${values.lowercase !== undefined ? 'lowercase' : 'max-length'} goes with --vocab; a model's ` +
          'model.json gives its own',
      );
    }
    settings = await modelTokenizerSettings(values.model ?? DEFAULT_MODEL_DIR);
  }
  if (run.texts.length === 0) checkStdin(run.command);
  const tokenizer = await createTokenizer(settings.vocabPath, {
    lowercase: settings.lowercase,
    maxLength: settings.maxLength,
    truncate: values.truncate ?? false,
  }).catch((error) => {
    throw loadFailure(error);
  });
  try {
    await forEachInput(run, values.json, async (text) => {
      const { tokens, ids, offsets, truncated } = tokenizer.encode(text);
      if (values.json) return out(`${JSON.stringify({ tokens, ids, offsets, ...(truncated ? { truncated } : {}) })}\n`);
      out(
        `${tokens.map((t, i) => `${t}(${ids[i]})`).join(' ')}${truncated ? ` … (${truncated} more tokens truncated)` : ''}\n`,
      );
    });
  } finally {
    tokenizer.dispose();
  }
}

main(process.argv.slice(2)).catch((error) => {
  const usage = error instanceof UsageError;
  const known = usage || error instanceof LoadError || error instanceof InputError;
  process.stderr.write(
    `tiankong: ${known ? plain(error.message) : (error?.stack ?? String(error))}` +
      `${usage ? '\n(tiankong --help shows the usage)' : ''}\n`,
  );
  process.exitCode = usage || error instanceof InputError ? 2 : 1;
});
