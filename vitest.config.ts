import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // The shared test models, generated before the workers start (why: tests/harness/global-setup.ts).
    globalSetup: ['tests/harness/global-setup.ts'],
    // Parity suites tokenize ~100k inputs twice (native tool and HF) on a 2-core machine.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // expect.poll waits for a page to reach a state; its default (1 s) failed on a loaded 2-core
    // machine (a training run beside the suite). Only a poll that fails waits this long.
    expect: { poll: { timeout: 30_000 } },
  },
});
