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
  tiankong fill [--model DIR] [--top-k N] [--threshold P] [--filter F] [--json] [TEXT ...]
  tiankong tokenize (--vocab PATH | --model DIR) [--lowercase] [--json] [TEXT ...]
  tiankong --help

Each TEXT (or, without TEXT, each line of stdin) is one input.

fill:
  --model DIR       model directory (model.json, model.onnx, vocab.txt); default: the packaged model
  --top-k N         candidates per [MASK] (default 5)
  --threshold P     hide candidates with probability below P (0..1, default 0)
  --filter F        chinese | no-punctuation
  --backend B       auto | wasm (default auto: onnxruntime-node when installed)
  --threads N       inference threads
  --json            one JSON object per input, exactly as the API's fill() returns it

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
  lowercase: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
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
  };
  const tk = await createFillMask({
    model: values.model, backend: values.backend, threads: number(values, 'threads', Number),
  });
  try {
    await forEachInput(texts, async (text) => {
      const result = await tk.fill(text, options);
      process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : formatFill(result));
    });
  } finally {
    await tk.dispose();
  }
}

function formatFill(result) {
  const lines = [result.text];
  for (const mask of result.masks) {
    lines.push(`  [MASK] #${mask.index + 1} at ${mask.start}–${mask.end}${result.cached ? ' (cached)' : ''}`);
    mask.candidates.forEach((c, rank) => {
      lines.push(`    ${String(rank + 1).padStart(2)}  ${c.token}\t${(100 * c.score).toFixed(2).padStart(6)}%  ${c.sequence}`);
    });
    lines.push(`        other\t${(100 * mask.other).toFixed(2).padStart(6)}%`);
  }
  return `${lines.join('\n')}\n\n`;
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
