/** The page's memory use, by the best measure the browser offers. */

export interface MemoryReading {
  bytes: number;
  /** 'total': every realm of the page incl. workers and wasm (measureUserAgentSpecificMemory); 'js-heap': the page's JS heap only. */
  scope: 'total' | 'js-heap';
}

interface MemoryApis {
  measureUserAgentSpecificMemory?: () => Promise<{ bytes: number }>;
  memory?: { usedJSHeapSize: number };
}

/**
 * The quick reading (performance.memory, Chromium only), or null where there is none.
 * It excludes workers, so it understates what a model in a Worker uses.
 */
export function quickMemoryReading(): MemoryReading | null {
  const used = (performance as unknown as MemoryApis).memory?.usedJSHeapSize;
  return typeof used === 'number' ? { bytes: used, scope: 'js-heap' } : null;
}

/**
 * The full reading when the page is cross-origin isolated and the browser has
 * performance.measureUserAgentSpecificMemory, else null. Chromium answers at its next garbage
 * collection (about a minute when idle), so this gives up only after `timeoutMs`.
 */
export async function fullMemoryReading(timeoutMs = 120_000): Promise<MemoryReading | null> {
  const measure = (performance as unknown as MemoryApis).measureUserAgentSpecificMemory;
  if (!globalThis.crossOriginIsolated || typeof measure !== 'function') return null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const result = await Promise.race([
      measure.call(performance),
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs))),
    ]);
    return result ? { bytes: result.bytes, scope: 'total' } : null;
  } catch {
    return null; // e.g. SecurityError when the page lost isolation
  } finally {
    clearTimeout(timer);
  }
}
