// The corpus sample the tokenizer benchmarks share (bench/core-bench.mjs, bench/run.mjs).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every `stride`-th line over all corpusDir/*.txt files (sorted by name), empty lines dropped. */
export function sampleLines(corpusDir, stride) {
  const lines = [];
  let index = 0;
  for (const file of readdirSync(corpusDir)
    .filter((f) => f.endsWith('.txt'))
    .sort()) {
    for (const line of readFileSync(join(corpusDir, file), 'utf8').split('\n')) {
      if (index++ % stride === 0 && line.length > 0) lines.push(line);
    }
  }
  return lines;
}
