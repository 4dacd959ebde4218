// The tokenizer through the wasm bindings (both builds) equals Hugging Face `tokenizers`
// (npm) on a corpus sample and tricky strings: ids and UTF-16 offsets.
// The exhaustive native parity lives in tests/parity; this checks the wasm path
// (UTF-16 <-> UTF-8 marshalling, surrogate pairs, lone surrogates, options object).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { WasmTokenizer } from '../../web/src/core/core-module.js';
import type { LoadedCore } from '../../web/src/core/load-core.js';
import * as parity from '../parity/parity.mjs';
import { BERT_BASE_CHINESE, VARIANTS, loadBuild, missingPrerequisite, readVocab } from './core-builds.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

const TRICKY = [
  '𠀀𠀁𪚥 are outside the BMP: 😀[MASK]😀 offsets count two units each',
  '床前明月光，疑是地[MASK]霜。',
  '他[MASK][MASK]地走了 [MASK]，然后 ［MASK］ 又来了',
  'lone high \ud800 and low \udc00 surrogates, reversed \udc00\ud800 pair',
  '\ud83d', // a lone surrogate alone
  'e\u0301 café CAFÉ ﬁ ＡＢＣ １２３ ㈱',
  'tabs\tand\nnewlines\r\nand\u00a0nbsp\u3000ideographic space',
  '\u0000\ufffd\u200b zero-width and controls \u0007',
  'unaffable unbelievable supercalifragilisticexpialidocious',
  'x'.repeat(120),
];

// U+FFFD stands in for a lone surrogate on both sides (napi converts it the same way).
const wellFormed = (s: string) => s.toWellFormed();

describe.skipIf(missing !== null).each(VARIANTS)('tokenizer through wasm [%s build]', (variant) => {
  let core: LoadedCore;
  let tokenizer: WasmTokenizer;
  beforeAll(async () => {
    core = await loadBuild(variant);
    // HF's tokenizer.json does not truncate: neither may the tokenizer compared with it.
    tokenizer = new core.module.Tokenizer(readVocab(), { ...BERT_BASE_CHINESE, maxLength: parity.NO_TRUNCATION });
  });
  afterAll(() => {
    tokenizer?.delete();
    core?.dispose();
  });

  function oursFor(lines: string[]) {
    return lines.map((line) => {
      const e = tokenizer.encode(line);
      const ids = Array.from(e.ids);
      const offsets = ids.map((_, i) => [e.offsets[2 * i], e.offsets[2 * i + 1]]);
      return { ids, offsets, tokens: ids.map((id) => tokenizer.idToToken(id)) };
    });
  }

  async function expectSameAsHf(lines: string[], hfLines = lines) {
    const theirs = await parity.hfEncode(parity.hfTokenizer('bert-base-chinese'), hfLines);
    const result = parity.compare(lines, oursFor(lines), theirs);
    expect(result.differing.slice(0, 10).join('\n')).toBe('');
    expect(result.compared).toBe(lines.length);
  }

  // ~5 000 lines of the full corpus, or every line of the committed sample when it is absent.
  test(
    parity.hasFullCorpus
      ? 'corpus sample (~5 000 lines) equals HF tokenizers'
      : 'committed corpus sample equals HF tokenizers',
    async () => {
      const lines = parity.hasFullCorpus
        ? (parity.corpusLines() as string[]).filter((_, i) => i % 10 === 0)
        : (parity.corpusLines() as string[]);
      expect(lines.length).toBeGreaterThan(parity.hasFullCorpus ? 4000 : 1000);
      await expectSameAsHf(lines);
    },
  );

  test('tricky strings (surrogate pairs, lone surrogates, masks, accents, controls) equal HF', async () => {
    const cases: string[] = [...TRICKY, ...parity.adversarial().cases];
    await expectSameAsHf(cases.map(wellFormed), cases.map(wellFormed).map(parity.canonicalMask));
    // Lone surrogates go in as they are: the binding makes them U+FFFD, one unit, same offsets.
    const raw = TRICKY.filter((s) => !s.isWellFormed());
    expect(raw.length).toBeGreaterThan(0);
    for (const s of raw) expect(tokenizer.encode(s)).toEqual(tokenizer.encode(wellFormed(s)));
  });

  test('mask variants become [MASK]', async () => {
    const variants: string[] = parity.adversarial().mask_variants;
    await expectSameAsHf(variants, variants.map(parity.canonicalMask));
    const e = tokenizer.encode('今天[mask]气很［ＭＡＳＫ］');
    expect(Array.from(e.maskPositions)).toEqual([3, 6]);
    const lenticular = tokenizer.encode('床前明月光，疑是地【MASK】霜');
    expect(Array.from(lenticular.maskPositions)).toEqual([10]);
    expect([lenticular.offsets[20], lenticular.offsets[21]]).toEqual([9, 15]);
  });

  test('offsets slice the JavaScript string (UTF-16 units)', () => {
    const text = '𠀀说：😀很[MASK]！';
    const e = tokenizer.encode(text);
    const pieces = Array.from(e.ids, (_, i) => text.slice(e.offsets[2 * i], e.offsets[2 * i + 1]));
    expect(pieces).toEqual(['', '𠀀', '说', '：', '😀', '很', '[MASK]', '！', '']);
  });

  test('truncation is reported, vocab and options errors are specific', () => {
    const small = new core.module.Tokenizer(readVocab(), { ...BERT_BASE_CHINESE, maxLength: 8 });
    try {
      const e = small.encode('一二三四五六七八九十');
      expect(e.ids).toHaveLength(8);
      expect(e.truncatedTokens).toBe(4);
    } finally {
      small.delete();
    }
    expect(() => new core.module.Tokenizer(new TextEncoder().encode('a\nb\n'), BERT_BASE_CHINESE)).toThrow(
      /Tokenizer: invalid vocab: .*\[PAD\]/,
    );
    expect(() => new core.module.Tokenizer('vocab' as never, BERT_BASE_CHINESE)).toThrow(
      /vocabBytes must be a Uint8Array/,
    );
    expect(() => new core.module.Tokenizer(readVocab(), { ...BERT_BASE_CHINESE, maxLength: 1 })).toThrow(
      /TokenizerOptions.maxLength must be an integer in \[2,/,
    );
    expect(() => new core.module.Tokenizer(readVocab(), { ...BERT_BASE_CHINESE, lowercase: 1 as never })).toThrow(
      /TokenizerOptions.lowercase must be a boolean/,
    );
    expect(() => tokenizer.encode(42 as never)).toThrow(/Tokenizer.encode: text must be a string/);
    expect(() => tokenizer.idToToken(21128)).toThrow(/idToToken: 21128 is not a token id/);
    expect(tokenizer.tokenToId('不存在的词')).toBe(-1);
    expect(tokenizer.specialIds()).toEqual({ pad: 0, unk: 100, cls: 101, sep: 102, mask: 103 });
  });
});
