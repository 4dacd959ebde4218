#!/usr/bin/env node
// The app on the phone profile alone (bench/lib/app-visits.mjs: measurePhoneVisits), without the
// rest of scripts/bench: first visit (time and bytes to the first answer and to the model's),
// page + Worker memory, second visit. Writes bench/results/phone.json.
//
//   node bench/phone.mjs [--shipped model/default]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measurePhoneVisits } from './lib/app-visits.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { shipped: { type: 'string', default: join(repoRoot, 'model', 'default') } } });
const result = await measurePhoneVisits({ repoRoot, modelDir: resolve(values.shipped) });
const report = {
  date: new Date().toISOString(),
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, load_average: loadavg().map((x) => +x.toFixed(2)) },
  ...result,
};
mkdirSync(join(repoRoot, 'bench', 'results'), { recursive: true });
writeFileSync(join(repoRoot, 'bench', 'results', 'phone.json'), `${JSON.stringify(report, null, 2)}\n`);
console.log(JSON.stringify(report, null, 2));
