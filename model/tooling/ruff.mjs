#!/usr/bin/env node
// Lints and format-checks the Python sources with ruff's WebAssembly build (npm
// @astral-sh/ruff-wasm-nodejs; native ruff is not packaged for Debian 12) using model/ruff.toml.
//
//   node model/tooling/ruff.mjs [--fix]     (--fix: apply ruff format and ruff's safe fixes of the
//                                            rules in SAFE_FIXES; other findings are printed)
// Exit status 1 when a file has lint findings or is not formatted.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { REPO_ROOT } from './data-paths.mjs';

const require = createRequire(import.meta.url);
const ruff = require('@astral-sh/ruff-wasm-nodejs');
const fix = process.argv.includes('--fix');

/** The few TOML forms model/ruff.toml uses: [section], key = "string" | number | ["list"]. */
function readToml(path) {
  const out = {};
  let section = out;
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = out[header[1]] = {};
      continue;
    }
    const [key, value] = line.split(/\s*=\s*/, 2);
    section[key] = JSON.parse(value);
  }
  return out;
}

// Fixes that never change behaviour: import order, needless f/quotes prefixes, whitespace.
const SAFE_FIXES = new Set(['I001', 'F541', 'UP037', 'UP031', 'UP032', 'W291', 'W293', 'UP015']);

/** Offset in `text` of ruff's 1-based (row, UTF-16 column) location. */
function offsetOf(text, { row, column }) {
  let offset = 0;
  for (let r = 1; r < row; r++) offset = text.indexOf('\n', offset) + 1;
  return offset + column - 1;
}

/** Applies the first safe fix ruff offers until none is left; returns the fixed text. */
function applySafeFixes(workspace, text) {
  for (let round = 0; round < 200; round++) {
    const fixable = workspace.check(text).find((d) => d.fix && SAFE_FIXES.has(d.code));
    if (!fixable) return text;
    // Apply the edits back to front so earlier offsets stay valid.
    const edits = fixable.fix.edits
      .map((e) => ({
        start: offsetOf(text, e.location),
        end: offsetOf(text, e.end_location),
        content: e.content ?? '',
      }))
      .sort((a, b) => b.start - a.start);
    for (const e of edits) text = text.slice(0, e.start) + e.content + text.slice(e.end);
  }
  return text;
}

function pythonFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === '__pycache__' || name.startsWith('.')) continue;
    if (statSync(path).isDirectory()) pythonFiles(path, out);
    else if (name.endsWith('.py')) out.push(path);
  }
  return out;
}

const config = readToml(join(REPO_ROOT, 'model', 'ruff.toml'));
const workspace = new ruff.Workspace(config, ruff.PositionEncoding.Utf16);
const files = [
  ...pythonFiles(join(REPO_ROOT, 'model')),
  join(REPO_ROOT, 'scripts', 'gen-unicode-tables'),
  join(REPO_ROOT, 'scripts', 'gen-shape-table'),
  join(REPO_ROOT, 'tests', 'reliability', 'make-faulty-models.py'),
];
let problems = 0;
for (const file of files) {
  const name = relative(REPO_ROOT, file);
  let text = readFileSync(file, 'utf8');
  const formatted = workspace.format(fix ? applySafeFixes(workspace, text) : text);
  if (formatted !== text) {
    if (fix) {
      writeFileSync(file, formatted);
      text = formatted;
    } else {
      console.log(`${name}: not formatted (node model/tooling/ruff.mjs --fix)`);
      problems++;
    }
  }
  for (const d of workspace.check(text)) {
    console.log(`${name}:${d.start_location.row}:${d.start_location.column}: ${d.code} ${d.message}`);
    problems++;
  }
}
console.error(`ruff ${ruff.Workspace.version()}: ${files.length} files, ${problems} problem(s)`);
process.exit(problems ? 1 : 0);
