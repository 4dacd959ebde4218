import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // Parity suites tokenize ~100k inputs twice (native tool and HF) on a 2-core machine.
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
