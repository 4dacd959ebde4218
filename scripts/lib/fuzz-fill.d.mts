// Types of fuzz-fill.mjs (used from the TypeScript test suites).
export interface FuzzFillReport {
  seed: number;
  calls: number;
  resolved: number;
  masks: number;
  errors: Record<string, number>;
  controls: number;
  failures: Array<{ input: string; options: unknown; problem: string }>;
  seconds: number;
  cache?: Record<string, number>;
}
export function fuzzFill(options: {
  api: unknown; model: string; seed?: number; calls?: number; seconds?: number; controlEvery?: number;
  cache?: { maxEntries: number; maxBytes: number }; maxFailures?: number; onProgress?: (report: FuzzFillReport) => void;
}): Promise<FuzzFillReport>;
