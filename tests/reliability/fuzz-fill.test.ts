// A short run of the fill() input fuzzer (tests/harness/fuzz-fill.mjs; scripts/fuzz-fill runs it
// for minutes): random hostile texts and options through the built package must each resolve to
// a valid result or reject with a known TiankongError, and the engine must keep working.
import { describe, expect, test } from 'vitest';
import { fuzzFill } from '../harness/fuzz-fill.mjs';
import { api, missingPrerequisite, testModelDir } from '../runtime/fixtures.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

describe.skipIf(missing !== null)('fill() input fuzzer (short run)', () => {
  test('400 random calls: results valid, only TiankongErrors, engine intact', async () => {
    const report = await fuzzFill({
      api: await api(),
      model: testModelDir(),
      seed: 20261130,
      calls: 400,
      controlEvery: 20,
    });
    expect(report.failures).toEqual([]);
    expect(report.calls).toBe(400);
    // The grammar reaches every outcome, so the run checked each path.
    expect(report.resolved).toBeGreaterThan(100);
    for (const code of ['EMPTY_INPUT', 'NO_MASK', 'TOO_LONG', 'BAD_OPTION'])
      expect(report.errors[code], code).toBeGreaterThan(0);
    expect(report.controls).toBe(20);
  });
});
