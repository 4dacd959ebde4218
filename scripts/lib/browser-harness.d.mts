// Types of browser-harness.mjs (used from the TypeScript test suites).
import type { BrowserContext } from 'playwright-core';
export type Fault = { drop: number } | { html: string } | { status: number } | { short: number };
export interface FaultServer {
  origin: string;
  log: string[];
  models: Record<string, string>;
  fail(path: string, fault: Fault, times?: number): void;
  close(): Promise<void>;
}
export function startFaultServer(options: { distDir: string; ortDir: string; models: Record<string, string> }): Promise<FaultServer>;
export const CHROMIUM: string;
export const MIME: Record<string, string>;
export function launchChromium(options?: { userDataDir?: string; viewport?: { width: number; height: number } }): Promise<BrowserContext>;
export function readDistFile(distDir: string, relPath: string): Buffer | string | null;
export type RouteAnswer = Buffer | string | { body: Buffer | string; type: string } | null;
export function startRouteServer(route: (path: string) => RouteAnswer): Promise<{ origin: string; close(): Promise<void> }>;
