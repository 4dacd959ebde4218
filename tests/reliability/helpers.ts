// Shared by the tests/reliability suites: the input grammar and result invariants live in
// scripts/lib/fill-inputs.mjs (also used by scripts/soak and scripts/fuzz-fill).
import { expect } from 'vitest';
import type { FillResult } from '../../web/src/index.js';
import { resultViolations } from '../../scripts/lib/fill-inputs.mjs';

export { INVISIBLE_CHARS, canonicalMasks, wellFormed } from '../../scripts/lib/fill-inputs.mjs';

/** See resultViolations: the invariants every result satisfies whatever the input. */
export function expectWellFormedResult(input: string, result: FillResult): void {
  expect(resultViolations(input, result)).toEqual([]);
}
