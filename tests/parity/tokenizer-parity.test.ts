// Bit-exact parity of the native tokenizer (build/native/wasm/tiankong_tokenize) with
// Hugging Face `tokenizers` (npm) for bert-base-chinese: ids and UTF-16 offsets.
// Needs the native build (skips with a message without it). The vocab is a committed fixture; the
// corpus sample comes from the full corpus (TIANKONG_DATA, default ../shared/data) when it is there,
// else from the committed corpus sample. The full corpus (every line) runs with scripts/parity-full.
import { describe, expect, test } from 'vitest';
import * as parity from './parity.mjs';

const missing: string | null = parity.missingPrerequisite();
if (missing) console.warn(missing);

function expectIdentical(result: { compared: number; differing: string[] }) {
  expect(result.compared).toBeGreaterThan(0);
  // Print every differing input (the assertion below only shows a count).
  for (const d of result.differing) console.error(d);
  expect(result.differing.length, result.differing.slice(0, 20).join('\n')).toBe(0);
}

describe.skipIf(missing !== null)('tokenizer parity with HF tokenizers', () => {
  test(
    parity.hasFullCorpus
      ? 'corpus sample (>= 50 000 lines)'
      : 'committed corpus sample (every line; the full corpus is absent)',
    async () => {
      const lines: string[] = parity.corpusLines();
      expect(lines.length).toBeGreaterThanOrEqual(parity.hasFullCorpus ? 50_000 : 1_000);
      expectIdentical(await parity.paritySuite('bert-base-chinese', lines));
    },
  );

  for (const config of Object.keys(parity.CONFIGS)) {
    test(`adversarial inputs [${config}]`, async () => {
      expectIdentical(await parity.paritySuite(config, parity.adversarial().cases));
    });

    test(`every Unicode scalar value [${config}]`, async () => {
      expectIdentical(await parity.paritySuite(config, parity.everyCodePointLines()));
    });
  }

  test('mask variants match HF on the canonical [MASK]', async () => {
    const variants: string[] = parity.adversarial().mask_variants;
    const result = await parity.paritySuite('bert-base-chinese', variants, variants.map(parity.canonicalMask));
    expectIdentical(result);
    for (const e of parity.nativeEncode(variants)) expect(e.ids).toContain(103);
  });

  test('truncation keeps the first 510 content tokens, like HF with max_length 512', async () => {
    const lines: string[] = parity.corpusLines();
    let long = lines.filter((l) => l.length > 700).slice(0, 200);
    if (long.length < 20) {
      // The committed corpus sample has few long lines: consecutive lines joined past 700 characters.
      let joined = '';
      for (const line of lines) {
        joined += line;
        if (joined.length > 700) {
          long.push(joined);
          joined = '';
        }
      }
      long = long.slice(0, 200);
    }
    expect(long.length).toBeGreaterThanOrEqual(20);
    const ours = parity.nativeEncode(long, { maxLength: 512 });
    const full = parity.nativeEncode(long);
    const hf = parity.hfTokenizer('bert-base-chinese');
    hf.setTruncation(512);
    const theirs = await parity.hfEncode(hf, long);
    expectIdentical(parity.compare(long, ours, theirs));
    ours.forEach((e: { ids: number[]; truncated_tokens: number }, i: number) => {
      expect(e.truncated_tokens).toBe(Math.max(0, full[i].ids.length - 512));
    });
  });
});
