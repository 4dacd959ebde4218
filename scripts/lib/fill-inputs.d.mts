// Types of fill-inputs.mjs (used from the TypeScript test suites).
export const INVISIBLE_CHARS: ReadonlyArray<readonly [name: string, chars: string]>;
export const MASK_SPELLING: RegExp;
export function canonicalMasks(text: string): string;
export function wellFormed(text: string): string;
export interface CheckedResult {
  text: string;
  masks: Array<{ index: number; start: number; end: number; other: number; candidates: Array<{ token: string; score: number; sequence: string }> }>;
}
export function resultViolations(input: string, result: CheckedResult, options?: { topK?: number; threshold?: number }): string[];
export function mulberry32(seed: number): () => number;
export function randomText(random: () => number): string;
export function randomFillCall(random: () => number): { text: unknown; options: Record<string, unknown> };
export function describeInput(text: unknown): string;
export function soakCall(random: () => number): { kind: 'repeat' | 'fresh' | 'error' | 'hostile'; text: string; options: Record<string, unknown> };
