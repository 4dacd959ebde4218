// scripts/bench-pinyin: what a sound constraint costs a fill. The same sentences filled plainly
// and with a constraint on the blank ([MASK:<syllable>] taken from the plain fill's best
// candidate, and [MASK:平] / [MASK:仄]), interleaved in one run, result cache off, through the
// built package on the wasm and native backends. Prints p50 per kind and the ratio to the plain
// fill; writes bench/results/pinyin.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { REPO_ROOT as root } from '../model/tooling/data-paths.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '15' },
    threads: { type: 'string', default: '1' },
    out: { type: 'string', default: join(root, 'bench', 'results', 'pinyin.json') },
  },
});
const modelDir = positionals[0] ?? join(root, 'model', 'default');
const runs = Number(values.runs);
const threads = Number(values.threads);
const SENTENCES = [
  '床前明月光，疑是地[MASK]霜。',
  '春风又绿江南[MASK]，明月何时照我还。',
  '快递员把包裹放在门[MASK]了。',
  '我们晚上去吃火[MASK]吧。',
  '白日依山[MASK]，黄河入海流。',
  '这台冰箱的声音太[MASK]了，晚上睡不着。',
  '他每天早上骑自行车去上[MASK]。',
  '会当凌绝顶，一览众山[MASK]。',
];

const { createFillMask } = await import(pathToFileURL(join(root, 'dist', 'index.js')).href);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const report = { model: relative(root, modelDir) || '.', runs, threads, sentences: SENTENCES.length, backends: {} };
for (const backend of ['wasm', 'auto']) {
  const tk = await createFillMask({ model: modelDir, backend, threads, cache: { maxEntries: 0 } });
  const name = tk.stats().backend;
  // The syllable of each sentence's best plain candidate: a constraint that keeps the answer.
  const syllables = [];
  for (const text of SENTENCES) {
    const reading = (await tk.fill(text)).masks[0].candidates[0].pinyin[0] ?? 'shang';
    syllables.push(
      reading
        .normalize('NFD')
        .replace(/[\u0300-\u036f]/g, '')
        .replace('u\u0308', 'ü'),
    );
  }
  const kinds = {
    plain: (text) => text,
    syllable: (text, i) => text.replace('[MASK]', `[MASK:${syllables[i]}]`),
    'tone class': (text) => text.replace('[MASK]', '[MASK:平]'),
  };
  const times = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
  for (let run = -2; run < runs; run++) {
    for (const [i, text] of SENTENCES.entries()) {
      for (const [kind, make] of Object.entries(kinds)) {
        const input = make(text, i);
        const started = performance.now();
        await tk.fill(input);
        if (run >= 0) times[kind].push(performance.now() - started); // two warm-up rounds
      }
    }
  }
  await tk.dispose();
  const plain = median(times.plain);
  report.backends[name] = Object.fromEntries(
    Object.entries(times).map(([kind, t]) => [kind, { p50Ms: median(t), ratio: median(t) / plain }]),
  );
  for (const [kind, { p50Ms, ratio }] of Object.entries(report.backends[name])) {
    console.log(`${name.padEnd(6)} ${kind.padEnd(10)} p50 ${p50Ms.toFixed(2)} ms  ×${ratio.toFixed(3)} of plain`);
  }
}
mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
console.error(`bench-pinyin: wrote ${values.out}`);
