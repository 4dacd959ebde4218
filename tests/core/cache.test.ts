// The wasm fingerprint cache (both builds): LRU semantics, count and byte bounds,
// exact keys (no false hits where a lossy fingerprint would collide), input errors.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { WasmFingerprintCache } from '../../web/src/core/core-module.js';
import type { LoadedCore } from '../../web/src/core/load-core.js';
import { VARIANTS, loadBuild, missingPrerequisite } from './core-builds.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const ids = (...values: number[]) => new Int32Array(values);

describe.skipIf(missing !== null).each(VARIANTS)('fingerprint cache [%s build]', (variant) => {
  let core: LoadedCore;
  const caches: WasmFingerprintCache[] = [];
  beforeAll(async () => {
    core = await loadBuild(variant);
  });
  afterAll(() => {
    caches.forEach((c) => c.delete());
    core?.dispose();
  });
  const newCache = (maxEntries: number, maxBytes: number) => {
    const cache = new core.module.FingerprintCache(maxEntries, maxBytes);
    caches.push(cache);
    return cache;
  };

  test('hits, misses and least-recently-used eviction by count', () => {
    const cache = newCache(2, 1 << 20);
    const mask = ids(2);
    expect(cache.get(ids(101, 1, 103, 102), mask, 'k5')).toBeUndefined();
    cache.put(ids(101, 1, 103, 102), mask, 'k5', 'A');
    cache.put(ids(101, 2, 103, 102), mask, 'k5', 'B 中文 😀');
    expect(cache.get(ids(101, 1, 103, 102), mask, 'k5')).toBe('A'); // A is now most recent
    cache.put(ids(101, 3, 103, 102), mask, 'k5', 'C'); // evicts B
    expect(cache.get(ids(101, 2, 103, 102), mask, 'k5')).toBeUndefined();
    expect(cache.get(ids(101, 1, 103, 102), mask, 'k5')).toBe('A');
    expect(cache.get(ids(101, 3, 103, 102), mask, 'k5')).toBe('C');
    expect(cache.stats()).toEqual({
      hits: 3,
      misses: 2,
      evictions: 1,
      entries: 2,
      bytes: cache.stats().bytes,
      maxEntries: 2,
      maxBytes: 1 << 20,
    });
    cache.clear();
    expect(cache.get(ids(101, 1, 103, 102), mask, 'k5')).toBeUndefined();
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0, hits: 3, misses: 3 });
  });

  test('eviction by bytes keeps the total under maxBytes', () => {
    const probe = newCache(10, 1 << 20);
    probe.put(ids(1, 2, 3), ids(1), 'f', 'x'.repeat(100));
    const entryBytes = probe.stats().bytes;
    expect(entryBytes).toBeGreaterThan(100);

    const cache = newCache(1000, 3 * entryBytes + 10);
    for (let i = 0; i < 3; i++) cache.put(ids(1, 2, i), ids(1), 'f', 'x'.repeat(100));
    expect(cache.stats()).toMatchObject({ entries: 3, evictions: 0, bytes: 3 * entryBytes });
    cache.put(ids(1, 2, 3), ids(1), 'f', 'x'.repeat(101)); // a fourth entry: evicts exactly the oldest
    expect(cache.stats()).toMatchObject({ entries: 3, evictions: 1, bytes: 3 * entryBytes + 1 });
    cache.put(ids(1, 2, 4), ids(1), 'f', 'x'.repeat(120)); // 10 bytes short after one eviction: two go
    expect(cache.stats()).toMatchObject({ entries: 2, evictions: 3 });
    expect(cache.get(ids(1, 2, 0), ids(1), 'f')).toBeUndefined();
    expect(cache.get(ids(1, 2, 1), ids(1), 'f')).toBeUndefined();
    expect(cache.get(ids(1, 2, 2), ids(1), 'f')).toBeUndefined();
    expect(cache.get(ids(1, 2, 3), ids(1), 'f')).toBe('x'.repeat(101));
    cache.put(ids(9), ids(0), 'f', 'y'.repeat(5 * entryBytes)); // larger than the cache: not stored
    expect(cache.get(ids(9), ids(0), 'f')).toBeUndefined();
    expect(cache.stats().bytes).toBeLessThanOrEqual(3 * entryBytes + 10);
  });

  test('no false hits where a (mask position, 3 tokens each side, length) fingerprint collides', () => {
    const cache = newCache(100, 1 << 20);
    const a = ids(101, 500, 600, 700, 11, 12, 13, 103, 21, 22, 23, 800, 102);
    const b = ids(101, 501, 600, 700, 11, 12, 13, 103, 21, 22, 23, 801, 102);
    cache.put(a, ids(7), 'topK=5', 'result for a');
    expect(cache.get(b, ids(7), 'topK=5')).toBeUndefined();
    expect(cache.get(a, ids(7), 'topK=6')).toBeUndefined();
    expect(cache.get(a, ids(7, 8), 'topK=5')).toBeUndefined();
    // Same bytes, different split between ids and mask positions.
    expect(cache.get(a.subarray(0, 12), ids(102, 7), 'topK=5')).toBeUndefined();
    expect(cache.get(a, ids(7), 'topK=5')).toBe('result for a');
  });

  test('bad arguments throw specific errors', () => {
    expect(() => newCache(-1, 10)).toThrow(/FingerprintCache: maxEntries must be an integer/);
    expect(() => newCache(10, 1.5)).toThrow(/FingerprintCache: maxBytes must be an integer/);
    const cache = newCache(10, 1000);
    expect(() => cache.get([1, 2] as never, ids(0), 'f')).toThrow(/FingerprintCache.get: ids must be an Int32Array/);
    expect(() => cache.put(ids(1), ids(0), 5 as never, 'v')).toThrow(
      /FingerprintCache.put: optionsFingerprint must be a string/,
    );
    expect(() => cache.put(ids(1), ids(0), 'f', {} as never)).toThrow(/FingerprintCache.put: value must be a string/);
  });
});
