// The benchmark's inputs are what BENCHMARKS.md says they are: checked with HF `tokenizers`
// (npm, Rust), independent of the code under test: exactly chars + 2 tokens ([CLS] … [SEP]),
// the requested number of [MASK] tokens, every sentence distinct (so tiankong's result cache
// cannot answer a latency run).
import { existsSync } from 'node:fs';
import tokenizers from 'tokenizers';
import { describe, expect, test } from 'vitest';
import { dataDir, dataPath } from '../../model/tooling/data-paths.mjs';
// @ts-expect-error -- plain ESM module of the benchmark, no typings
import { benchSentences } from '../../bench/lib/sentences.mjs';

const tokenizerJson = dataPath('vocab/bert-base-chinese/tokenizer.json');
const missing = existsSync(tokenizerJson) ? null : `${dataDir()} not found: benchmark input test skipped`;

describe.skipIf(missing !== null)('benchmark sentences', () => {
  const lengths = [8, 16, 32, 64, 128];
  const maskCounts = [1, 3];
  const sentences: Map<string, string[]> = benchSentences({ corpusDir: dataPath('corpus'), lengths, maskCounts, count: 33 });

  test('one set per length and mask count, all distinct', () => {
    expect([...sentences.keys()].sort()).toEqual(lengths.flatMap((c) => maskCounts.map((m) => `${c}x${m}`)).sort());
    const all = [...sentences.values()].flat();
    expect(all).toHaveLength(lengths.length * maskCounts.length * 33);
    expect(new Set(all).size).toBe(all.length);
  });

  test('chars + 2 tokens with the requested masks (HF tokenizers)', async () => {
    const tokenizer = tokenizers.Tokenizer.fromFile(tokenizerJson);
    for (const [key, texts] of sentences) {
      const [chars, masks] = key.split('x').map(Number);
      for (const text of texts) {
        expect(Array.from(text.replaceAll('[MASK]', '_'))).toHaveLength(chars);
        const tokens = (await tokenizer.encode(text)).getTokens();
        expect(tokens, text).toHaveLength(chars + 2);
        expect(tokens.filter((t: string) => t === '[MASK]'), text).toHaveLength(masks);
      }
    }
  });
});
