// Types of soak.mjs (used from the TypeScript test suites).
import type { Page } from 'playwright-core';
export interface SoakSummary { start: number; middle: number; end: number; growthPercent: number | null; secondHalfGrowthPercent: number | null }
export interface SoakRun {
  fills: number;
  seconds: number;
  fillsPerSecond: number;
  counts: Record<'repeat' | 'fresh' | 'error' | 'hostile' | 'resolved' | 'rejected' | 'unexpected', number>;
  unexpected: string[];
  samples: Array<Record<string, number>>;
  summary: Record<string, SoakSummary | undefined>;
  cache: { hits: number; misses: number; evictions: number; entries: number; bytes: number; maxEntries: number; maxBytes: number };
  threads: number;
}
type Cache = { maxEntries: number; maxBytes: number };
export function soakNode(options: { distDir: string; model: string; fills: number; samples?: number; seed?: number; warmup?: number; cache?: Cache }): Promise<SoakRun>;
export function soakBrowser(options: { page: Page; userDataDir?: string; fills: number; samples?: number; seed?: number; warmup?: number; cache?: Cache; modelUrl?: string }): Promise<SoakRun>;
export function summarize(points: Array<Record<string, number>>): Record<string, SoakSummary>;
