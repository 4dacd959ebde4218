/**
 * Loads the tiankong runtime package, which the build copies verbatim next to the page
 * (`tiankong/`), as an external ES module: its workers and wasm files then keep the URLs
 * the package computes for itself.
 */
import type { CreateFillMaskOptions, FillMaskModel } from '../../src/types.js';

export type {
  CandidateSource,
  CharReading,
  CheckCorrection,
  CheckResult,
  FillMaskModel,
  FillMaskPreview,
  FillOptions,
  FillResult,
  FillMaskStats,
  LoadProgress,
  ReadingsResult,
} from '../../src/types.js';

export interface RuntimeModule {
  createFillMask(options: CreateFillMaskOptions): Promise<FillMaskModel>;
}

/** An app-level failure with a code the page has a message for (see messages.ts). */
export class AppError extends Error {
  constructor(
    readonly code: 'RUNTIME_LOAD',
    message: string,
  ) {
    super(message);
  }
}

/** URL of a file the build placed next to the page. */
export function appUrl(relative: string): string {
  return new URL(relative, document.baseURI).href;
}

/** Imports the runtime entry; rejects with AppError RUNTIME_LOAD naming the URL. */
export async function importRuntime(): Promise<RuntimeModule> {
  const url = appUrl(__TIANKONG_RUNTIME_ENTRY__);
  try {
    return (await import(/* @vite-ignore */ url)) as RuntimeModule;
  } catch (error) {
    throw new AppError('RUNTIME_LOAD', `cannot import the tiankong runtime from ${url}: ${String(error)}`);
  }
}
