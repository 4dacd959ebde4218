// Vitest global setup: generates the shared test models once, in the main process, before any
// test file runs. Why: a test file that generates them itself blocks its worker thread in
// execFileSync for as long as the generation takes (over 100 s on a loaded 2-core machine), and a
// worker blocked past vitest's fixed 60 s RPC timeout fails the run with "[vitest-worker]: Timeout
// calling onTaskUpdate" although every test passed (fresh clone, 2026-12-07). The fixtures are
// cached under .cache/test-model/, so later calls in the test files only check the cache.
import { bertVocabMemoryModelDir, missingPrerequisite, testModelDir } from '../runtime/fixtures.js';

export default function setup(): void {
  if (missingPrerequisite() !== null) return; // the runtime suites skip and say why
  const start = Date.now();
  testModelDir();
  bertVocabMemoryModelDir();
  const seconds = (Date.now() - start) / 1000;
  if (seconds > 1) console.log(`global setup: the shared test models generated in ${seconds.toFixed(0)} s`);
}
