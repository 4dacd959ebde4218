#!/usr/bin/env node
// tiankong CLI: a thin shell over the package API in dist/ (build it with scripts/build).
//   tiankong fill [options] [TEXT ...]      fill every [MASK] (stdin lines when no TEXT)
//   tiankong tokenize [options] [TEXT ...]  BERT WordPiece tokens, ids and offsets
// Exit codes: 0 ok, 1 the model or vocab could not be loaded, 2 bad usage or some input lines
// were bad (the other lines are still processed and printed).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const HELP = `tiankong — Chinese fill-in-the-blank (BERT masked-language model)

Usage:
  tiankong fill [--model DIR] [--top-k N] [--threshold P] [--filter F] [--no-memory] [--joint [--beam N]] [--explain] [--json] [TEXT ...]
  tiankong tokenize (--vocab PATH | --model DIR) [--lowercase] [--json] [TEXT ...]
  tiankong --help

Each TEXT (or, without TEXT, each line of stdin) is one input.

fill:
  --model DIR       model directory (model.json, model.onnx, vocab.txt); default: the packaged model
  --top-k N         candidates per [MASK] (default 5)
  --threshold P     hide candidates with probability below P (0..1, default 0)
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
  --json            one JSON object per input, exactly as the API's fill() returns it; with
                    --explain it also has "explanations": explain() of each mask's top candidate

tokenize:
  --vocab PATH      a BERT vocab.txt (one token per line)
  --model DIR       use the model's vocab and tokenizer settings instead
  --lowercase       lowercase and strip accents (uncased BERT vocabularies)
  --json            {"tokens":[...],"ids":[...],"offsets":[[start,end],...]} per input (UTF-16 offsets)

Exit status: 0 ok, 1 the model or vocab could not be loaded, 2 bad usage or bad input lines.

Example:
  tiankong fill "春眠不觉晓，处处闻啼[MASK]。"
`;

const OPTIONS = {
  model: { type: 'string' }, 'top-k': { type: 'string' }, threshold: { type: 'string' }, filter: { type: 'string' },
  backend: { type: 'string' }, threads: { type: 'string' }, json: { type: 'boolean' }, vocab: { type: 'string' },
  joint: { type: 'boolean' }, beam: { type: 'string' }, explain: { type: 'boolean' },
  lowercase: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, 'no-memory': { type: 'boolean' },
};

class UsageError extends Error {}

async function main(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (error) {
    throw new UsageError(error.message);
  }
  const { values, positionals } = parsed;
  const [command, ...texts] = positionals;
  if (values.help || command === 'help') return void process.stdout.write(HELP);
  if (command === 'fill') return fill(values, texts);
  if (command === 'tokenize') return tokenize(values, texts);
  throw new UsageError(command === undefined ? 'missing command (fill or tokenize)' : `unknown command '${command}' (expected fill or tokenize)`);
}

function number(values, name, parse) {
  if (values[name] === undefined) return undefined;
  const value = parse(values[name]);
  if (!Number.isFinite(value)) throw new UsageError(`--${name} must be a number, got '${values[name]}'`);
  return value;
}

/** The inputs: the TEXT arguments, or the lines of stdin (as they arrive). */
async function* inputs(texts) {
  if (texts.length > 0) return yield* texts;
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) yield line;
}

/** Runs `each` on every input; a failure is reported on stderr and turns the exit code to 2. */
async function forEachInput(texts, each) {
  let lineNumber = 0;
  for await (const text of inputs(texts)) {
    lineNumber++;
    try {
      await each(text);
    } catch (error) {
      if (error?.name !== 'TiankongError' || error.code === 'BAD_MODEL') throw error;
      const where = texts.length > 0 ? `input ${lineNumber}` : `line ${lineNumber}`;
      process.stderr.write(`tiankong: ${where}: ${error.message.replace(/^tiankong: /, '')} [${error.code}]\n`);
      process.exitCode = 2;
    }
  }
}

async function fill(values, texts) {
  const { createFillMask } = await import('../dist/index.js');
  const options = {
    topK: number(values, 'top-k', Number), threshold: number(values, 'threshold', Number), filter: values.filter,
    ...(values.joint ? { joint: true } : {}), beam: number(values, 'beam', Number),
  };
  if (options.beam !== undefined && !values.joint) throw new UsageError('--beam needs --joint');
  const tk = await createFillMask({
    model: values.model, backend: values.backend, threads: number(values, 'threads', Number),
    ...(values['no-memory'] ? { memory: false } : {}),
  });
  try {
    await forEachInput(texts, async (text) => {
      const result = await tk.fill(text, options);
      if (!values.explain) return void process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : formatFill(result));
      const explanations = [];
      for (const mask of result.masks) {
        if (mask.candidates.length > 0) explanations.push(await tk.explain(text, mask.index, mask.candidates[0].token));
      }
      process.stdout.write(values.json ? `${JSON.stringify({ ...result, explanations })}\n`
        : formatFill(result, explanations.map((e) => formatExplain(e, useColour()))));
    });
  } finally {
    await tk.dispose();
  }
}

/** The fill table; `explained[i]` (lines) is printed under mask i when given. */
function formatFill(result, explained = []) {
  const lines = [result.text];
  for (const mask of result.masks) {
    lines.push(`  [MASK] #${mask.index + 1} at ${mask.start}–${mask.end}${result.cached ? ' (cached)' : ''}`);
    mask.candidates.forEach((c, rank) => {
      lines.push(`    ${String(rank + 1).padStart(2)}  ${c.token}\t${(100 * c.score).toFixed(2).padStart(6)}%  ${c.sequence}`);
      if (c.source) lines.push(`          出处: ${formatSource(c.source)}`);
    });
    lines.push(`        other\t${(100 * mask.other).toFixed(2).padStart(6)}%`);
    if (explained[mask.index]) lines.push(...explained[mask.index]);
  }
  for (const [w, word] of (result.words ?? []).entries()) {
    lines.push(`  word #${w + 1}: [MASK] #${word.maskIndices.map((i) => i + 1).join('–#')} at ${word.start}–${word.end} (joint)`);
    word.candidates.forEach((c, rank) => {
      lines.push(`    ${String(rank + 1).padStart(2)}  ${c.text}\t${percent(c.score)}  ${c.sequence}`);
    });
  }
  return `${lines.join('\n')}\n\n`;
}

/** 李白《静夜思》（千家诗）：床前明月光，疑是地上霜。 — or 成语：掩耳盗铃 */
function formatSource({ work, title, author, text }) {
  if (work === '成语') return `成语 ${title}`;
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

async function tokenize(values, texts) {
  const { createTokenizer } = await import('../dist/index.js');
  let vocabPath = values.vocab;
  let lowercase = values.lowercase ?? false;
  if (values.model !== undefined) {
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(join(values.model, 'model.json'), 'utf8'));
    } catch (error) {
      throw Object.assign(new Error(`cannot read ${join(values.model, 'model.json')}: ${error.message}`), { exitCode: 1 });
    }
    vocabPath ??= join(values.model, manifest.tokenizer.vocab);
    lowercase = values.lowercase ?? manifest.tokenizer.lowercase;
  }
  if (vocabPath === undefined) throw new UsageError('tokenize needs --vocab PATH or --model DIR');
  const tokenizer = await createTokenizer(vocabPath, { lowercase });
  try {
    await forEachInput(texts, async (text) => {
      const { tokens, ids, offsets } = tokenizer.encode(text);
      process.stdout.write(values.json ? `${JSON.stringify({ tokens, ids, offsets })}\n`
        : `${tokens.map((t, i) => `${t}(${ids[i]})`).join(' ')}\n`);
    });
  } finally {
    tokenizer.dispose();
  }
}

main(process.argv.slice(2)).catch((error) => {
  const usage = error instanceof UsageError;
  process.stderr.write(`tiankong: ${error.message.replace(/^tiankong: /, '')}${usage ? '\n(tiankong --help shows the usage)' : ''}\n`);
  process.exitCode = usage ? 2 : 1;
});
