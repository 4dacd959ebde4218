// The loader's build choice (a pure policy) and its behaviour in Node with the real builds.
import { pathToFileURL } from 'node:url';
import { describe, expect, test } from 'vitest';
import { VARIANTS, loaderPath, missingPrerequisite } from './core-builds.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const loader = async () =>
  (await import(pathToFileURL(loaderPath).href)) as typeof import('../../web/src/core/load-core.js');

describe.skipIf(missing !== null)('loadCore', () => {
  test('variant policy: threads in Node and on isolated pages, else one thread with a fix-it warning', async () => {
    const { chooseVariant } = await loader();
    const browser = { isNode: false, crossOriginIsolated: false, hasSharedArrayBuffer: false };
    expect(chooseVariant({ isNode: true, crossOriginIsolated: false, hasSharedArrayBuffer: true })).toMatchObject({
      variant: 'threads',
    });
    expect(chooseVariant({ ...browser, crossOriginIsolated: true, hasSharedArrayBuffer: true })).toEqual({
      variant: 'threads',
      reason: 'page is cross-origin isolated',
    });
    const fallback = chooseVariant(browser);
    expect(fallback.variant).toBe('single');
    expect(fallback.warning).toMatch(
      /not cross-origin isolated.*Cross-Origin-Opener-Policy: same-origin.*Cross-Origin-Embedder-Policy: require-corp/,
    );
    // A browser that exposes SharedArrayBuffer without isolation still cannot share it with workers.
    expect(chooseVariant({ ...browser, hasSharedArrayBuffer: true }).variant).toBe('single');
    expect(chooseVariant(browser, 'single')).toEqual({ variant: 'single', reason: 'single-threaded build requested' });
    expect(() => chooseVariant(browser, 'threads')).toThrow(
      /threaded core needs SharedArrayBuffer.*Cross-Origin-Opener-Policy/,
    );
  });

  test.each(VARIANTS)('loads the %s build in Node and reports it', async (variant) => {
    const { loadCore } = await loader();
    const core = await loadCore({ variant });
    try {
      expect(core.variant).toBe(variant);
      expect(core.module.buildInfo()).toEqual({
        threads: variant === 'threads',
        simd: true,
        version: expect.any(String),
      });
    } finally {
      core.dispose();
    }
  });

  test('auto picks threads in Node without a warning', async () => {
    const { loadCore } = await loader();
    const warnings: string[] = [];
    const core = await loadCore({ onWarning: (m) => warnings.push(m) });
    core.dispose();
    expect(core.variant).toBe('threads');
    expect(core.reason).toMatch(/Node/);
    expect(warnings).toEqual([]);
  });

  test('a wrong baseUrl names the file it could not load', async () => {
    const { loadCore } = await loader();
    await expect(loadCore({ variant: 'single', baseUrl: pathToFileURL('/nonexistent/') })).rejects.toThrow(
      /cannot load the single core from file:\/\/\/nonexistent\/tiankong-core.mjs/,
    );
  });
});
