// Option objects a careless or hostile caller passes (issue 28, item 4): unknown keys, inherited
// properties, throwing Proxies. Every rejection is a TiankongError BAD_OPTION, and an inherited
// Object.prototype property never changes a fill.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillMaskModel } from '../../web/src/index.js';
import { api, missingPrerequisite, testModelDir } from '../runtime/fixtures.js';

const missing = missingPrerequisite();

describe.skipIf(missing !== null)('API option objects', () => {
  let tk: FillMaskModel;
  let TiankongError: Awaited<ReturnType<typeof api>>['TiankongError'];
  const TEXT = '今天天气真[MASK]啊';

  beforeAll(async () => {
    const m = await api();
    TiankongError = m.TiankongError;
    tk = await m.createFillMask({ model: testModelDir(), threads: 1 });
  });
  afterAll(() => tk?.dispose());

  async function rejection(run: () => Promise<unknown>) {
    const error = await run().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TiankongError);
    return error as InstanceType<typeof TiankongError>;
  }

  test('an unknown key is BAD_OPTION naming the nearest known option', async () => {
    const e = await rejection(() => tk.fill(TEXT, { topk: 3 } as never));
    expect(e.code).toBe('BAD_OPTION');
    expect(e.message).toBe('tiankong: fill has no option "topk"; did you mean topK?');
    const far = await rejection(() => tk.fill(TEXT, { colour: 'red' } as never));
    expect(far.message).toContain('fill has no option "colour"; it takes topK, threshold');
    const explain = await rejection(() => tk.explain(TEXT, 0, '好', { signl: undefined } as never));
    expect(explain.message).toContain('explain has no option "signl"; did you mean signal?');
    const { createFillMask } = await api();
    const create = await rejection(() => createFillMask({ model: testModelDir(), theads: 1 } as never));
    expect(create.message).toContain('createFillMask has no option "theads"; did you mean threads?');
  });

  test('inherited properties are never read as options', async () => {
    const clean = await tk.fill(TEXT);
    const proto = Object.prototype as Record<string, unknown>;
    proto.topK = 1e9;
    proto.joint = true;
    try {
      const polluted = await tk.fill(TEXT, {});
      expect(polluted.masks).toEqual(clean.masks);
      expect(polluted.masks[0].candidates).toHaveLength(5);
    } finally {
      delete proto.topK;
      delete proto.joint;
    }
  });

  test('a Proxy or getter that throws is BAD_OPTION, not a raw Error', async () => {
    const keys = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('ownKeys boom');
        },
      },
    );
    const e1 = await rejection(() => tk.fill(TEXT, keys));
    expect(e1.code).toBe('BAD_OPTION');
    expect(e1.message).toContain('reading the options failed: ownKeys boom');
    const getter = Object.defineProperty({}, 'topK', {
      enumerable: true,
      get() {
        throw new Error('getter boom');
      },
    });
    const e2 = await rejection(() => tk.fill(TEXT, getter));
    expect(e2.message).toContain('reading the option topK failed: getter boom');
    // The engine is unharmed.
    expect((await tk.fill(TEXT)).masks[0].candidates).toHaveLength(5);
  });

  test('a filter that can never yield a candidate is BAD_OPTION, not an empty list', async () => {
    for (const filter of [{ allow: ['[CLS]'] }, { allow: ['[MASK]', '[SEP]'] }, { allow: ['好'], deny: ['好'] }]) {
      const e = await rejection(() => tk.fill(TEXT, { filter }));
      expect(e.code, JSON.stringify(filter)).toBe('BAD_OPTION');
      expect(e.message).toContain('filter leaves no token a [MASK] can be filled with');
    }
    // One proposable token among special ones still fills, with just that token.
    const one = await tk.fill(TEXT, { filter: { allow: ['[CLS]', '好'] } });
    expect(one.masks[0].candidates.map((c) => c.token)).toEqual(['好']);
  });

  test('explain of a special token is BAD_OPTION', async () => {
    for (const token of ['[CLS]', '[MASK]', '[PAD]']) {
      const e = await rejection(() => tk.explain(TEXT, 0, token));
      expect(e.code, token).toBe('BAD_OPTION');
      expect(e.message).toContain('which fill() never proposes');
    }
    expect((await tk.explain(TEXT, 0, '好')).token).toBe('好');
  });

  test('a throwing onProgress rejects createFillMask with a TiankongError, not the raw error', async () => {
    const { createFillMask } = await api();
    const e = await rejection(() =>
      createFillMask({
        model: testModelDir(),
        threads: 1,
        onProgress: () => {
          throw new Error('progress boom');
        },
      }),
    );
    expect(e.code).toBe('BAD_OPTION');
    expect(e.message).toBe('tiankong: the onProgress callback threw: progress boom');
  });

  test('threads beyond the machine are clamped, and stats() says so', async () => {
    const { createFillMask } = await api();
    const { availableParallelism } = await import('node:os');
    const cores = availableParallelism();
    const many = await createFillMask({ model: testModelDir(), threads: 64, backend: 'auto' });
    try {
      expect(many.stats().threads).toBe(cores);
      expect(many.stats().threadsReason).toBe(`requested 64, clamped to the ${cores} CPUs of this machine`);
    } finally {
      await many.dispose();
    }
    expect(tk.stats().threadsReason).toBe('requested');
  });
});
