// The benchmark's inputs are what BENCHMARKS.md says they are: checked with HF `tokenizers`
// (npm, Rust), independent of the code under test: exactly chars + 2 tokens ([CLS] … [SEP]),
// the requested number of [MASK] tokens, every sentence distinct (so tiankong's result cache
// cannot answer a latency run).
// Without the full corpus (TIANKONG_DATA, default ../shared/data) the same generator runs on the
// committed corpus sample, which has enough long windows in poetry.txt for 5 sentences a set.
import { fileURLToPath } from 'node:url';
import tokenizers from 'tokenizers';
import { describe, expect, test } from 'vitest';
import { dataAvailable, dataDir, dataPath } from '../../model/tooling/data-paths.mjs';
import { benchSentences } from '../../bench/lib/sentences.mjs';

const fixtures = fileURLToPath(new URL('../fixtures/data/', import.meta.url));
const tokenizerJson = `${fixtures}vocab/bert-base-chinese/tokenizer.json`;
const full = dataAvailable('corpus/wiki.txt');
if (!full)
  console.warn(
    `benchmark sentences: the full corpus is absent (${dataDir()}): checking the generator on the committed sample`,
  );
const input = full
  ? { corpusDir: dataPath('corpus'), file: 'wiki.txt', count: 33 }
  : { corpusDir: `${fixtures}corpus`, file: 'poetry.txt', count: 5 };

describe(`benchmark sentences (${full ? 'full corpus, as benchmarked' : 'committed corpus sample'})`, () => {
  const lengths = [8, 16, 32, 64, 128];
  const maskCounts = [1, 3];
  const sentences: Map<string, string[]> = benchSentences({ ...input, lengths, maskCounts });

  test('one set per length and mask count, all distinct', () => {
    expect([...sentences.keys()].sort()).toEqual(lengths.flatMap((c) => maskCounts.map((m) => `${c}x${m}`)).sort());
    const all = [...sentences.values()].flat();
    expect(all).toHaveLength(lengths.length * maskCounts.length * input.count);
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
        expect(
          tokens.filter((t: string) => t === '[MASK]'),
          text,
        ).toHaveLength(masks);
      }
    }
  });
});
