#!/usr/bin/env node
// Top-1 agreement of exports of one checkpoint with a reference export (e.g. compressed forms
// against the fp32 one) on every held-out suite of scripts/evaluate-model, the model alone and
// fused with the corpus memory as the product runs them. All read the same memory.bin and fusion
// weights (the first candidate's own, or --memory DIR's: an fp32 export has none), so a fused
// disagreement is the compression's alone. Also each side's top-1 accuracy, so a disagreement's
// cost shows, and the reference's top-1 margin (logits) where they disagree.
//
//   node model/tooling/compare-models.mjs REFERENCE_DIR CANDIDATE_DIR... [--memory DIR]
//        [--per-source N] [--corpus DIR] [--json FILE] [--dist DIR]
//
// --dist: a built runtime (its core/load-core.js and core/wasm/) other than the repository's dist/,
// e.g. a private build of a changed C++ core. Prints a markdown table; --json writes the numbers.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from './data-paths.mjs';
import { buildSuites } from './eval-cases.mjs';
import { openEvaluator } from './fill-eval.mjs';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    memory: { type: 'string' },
    corpus: { type: 'string', default: join(REPO_ROOT, '.cache/corpus') },
    'per-source': { type: 'string', default: '2000' },
    json: { type: 'string' },
    dist: { type: 'string' },
  },
});
if (positionals.length < 2) {
  console.error(
    'usage: compare-models.mjs REFERENCE_DIR CANDIDATE_DIR... [--memory DIR] [--per-source N] [--corpus DIR] [--json FILE] [--dist DIR]',
  );
  process.exit(2);
}
const [referenceDir, ...candidateDirs] = positionals.map((p) => resolve(p));
const memoryDir = resolve(args.memory ?? candidateDirs[0]);
const dist = args.dist ? resolve(args.dist) : undefined;
const reference = await openEvaluator(referenceDir, { memoryDir, dist });
const fused = reference.memory !== null && reference.fusion !== null;
if (!fused) console.error(`compare-models: no memory in ${memoryDir}: model-alone agreement only (try --memory)`);
const suites = buildSuites(args.corpus, 'val', Number(args['per-source']));
if (!Object.keys(suites).length) {
  console.error(`compare-models: no held-out split in ${args.corpus}: run scripts/build-corpus`);
  process.exit(2);
}

// The reference's answers once: per suite, the kept cases and the reference's logits.
const cases = {};
for (const [name, suite] of Object.entries(suites)) {
  const kept = [];
  for (const c of suite.cases) {
    const encoding = reference.encode(c.text);
    const answers = (c.answers ?? [c.answer]).map((a) => reference.vocab.indexOf(a)).filter((id) => id >= 0);
    if (encoding && answers.length && reference.vocab.indexOf(c.answer) >= 0) kept.push({ encoding, answers });
  }
  cases[name] = { kept, rows: await reference.logits(kept.map((k) => k.encoding)) };
}

const pct = (x) => (x === undefined ? '–' : `${(100 * x).toFixed(1)}%`);
// Directories as written to the JSON: relative to the repository, so no machine path is committed.
const shown = (dir) => relative(REPO_ROOT, dir) || '.';
const results = { reference: shown(referenceDir), memory: fused ? shown(memoryDir) : null, candidates: {} };
for (const candidateDir of candidateDirs) {
  const candidate = await openEvaluator(candidateDir, { memoryDir, dist });
  if (candidate.vocab.join('\n') !== reference.vocab.join('\n')) {
    console.error(`compare-models: ${candidateDir} has another vocabulary than the reference (not one checkpoint)`);
    process.exit(2);
  }
  console.log(`\n${shown(candidateDir)} vs ${shown(referenceDir)}\n`);
  console.log(
    '| suite | cases | model agree | model top-1 cand / ref | fused agree | fused top-1 cand / ref | largest ref margin where the model disagrees |',
  );
  console.log('|---|---|---|---|---|---|---|');
  const suitesOut = {};
  for (const [name, { kept, rows: rowsR }] of Object.entries(cases)) {
    const rowsC = await candidate.logits(kept.map((k) => k.encoding));
    const n = kept.length;
    const entry = {
      cases: n,
      model: { agree: 0, top1: [0, 0] },
      ...(fused ? { fused: { agree: 0, top1: [0, 0] } } : {}),
    };
    const margins = []; // the reference's top-1 minus top-2 logit where the model-alone answers differ
    kept.forEach((k, i) => {
      const [c, r] = [candidate.topModel(rowsC[i], k.encoding, 2), reference.topModel(rowsR[i], k.encoding, 2)];
      entry.model.agree += c[0] === r[0];
      entry.model.top1[0] += k.answers.includes(c[0]);
      entry.model.top1[1] += k.answers.includes(r[0]);
      if (c[0] !== r[0]) margins.push(rowsR[i][r[0]] - rowsR[i][r[1]]);
      if (fused) {
        const fc = candidate.topFused(rowsC[i], k.encoding, 1)[0];
        const fr = reference.topFused(rowsR[i], k.encoding, 1)[0];
        entry.fused.agree += fc === fr;
        entry.fused.top1[0] += k.answers.includes(fc);
        entry.fused.top1[1] += k.answers.includes(fr);
      }
    });
    for (const mode of fused ? ['model', 'fused'] : ['model']) {
      entry[mode].agree /= n;
      entry[mode].top1 = entry[mode].top1.map((x) => x / n);
    }
    entry.disagreeingMargins = margins.sort((a, b) => b - a).map((m) => Number(m.toFixed(4)));
    suitesOut[name] = entry;
    const top = (e) => (e ? `${pct(e.top1[0])} / ${pct(e.top1[1])}` : '–');
    console.log(
      `| ${name} | ${n} | ${pct(entry.model.agree)} | ${top(entry.model)} | ${pct(entry.fused?.agree)} | ` +
        `${top(entry.fused)} | ${margins.length ? margins[0].toFixed(3) : '–'} |`,
    );
  }
  results.candidates[shown(candidateDir)] = suitesOut;
  candidate.dispose();
}
if (args.json) {
  mkdirSync(dirname(resolve(args.json)), { recursive: true });
  writeFileSync(args.json, `${JSON.stringify(results, null, 2)}\n`);
  console.error(`compare-models: wrote ${args.json}`);
}
reference.dispose();
