/**
 * Node only: a standalone tokenizer (the C++ core's BERT WordPiece) for a vocab.txt, as used by
 * `tiankong tokenize`.
 */
import { readFile } from 'node:fs/promises';
import { TiankongError, describe } from './errors.js';
import { loadEngineCore, toWellFormed } from './engine.js';

export interface TokenizerSettings {
  /** Lowercase (and strip accents) like an uncased BERT. Default false (bert-base-chinese). */
  lowercase?: boolean;
  /** Longest encoding incl. [CLS]/[SEP]. Default 512. */
  maxLength?: number;
}

export interface Tokenized {
  tokens: string[];
  /** Including [CLS] and [SEP]. */
  ids: number[];
  /** [start, end) UTF-16 offsets into the text per token; [0, 0] for [CLS]/[SEP]. */
  offsets: [number, number][];
}

export interface TokenizerHandle {
  encode(text: string): Tokenized;
  dispose(): void;
}

/**
 * @example
 * ```ts
 * const tokenizer = await createTokenizer('model/default/vocab.txt');
 * console.log(tokenizer.encode('春眠不觉晓').tokens); // ['[CLS]', '春', '眠', '不', '觉', '晓', '[SEP]']
 * tokenizer.dispose();
 * ```
 */
export async function createTokenizer(vocabPath: string, settings: TokenizerSettings = {}): Promise<TokenizerHandle> {
  let vocab: Uint8Array;
  try {
    vocab = new Uint8Array(await readFile(vocabPath));
  } catch (error) {
    throw new TiankongError('BAD_MODEL', `tiankong: cannot read the vocab ${vocabPath}: ${describe(error)}`);
  }
  const core = await loadEngineCore();
  const lowercase = settings.lowercase ?? false;
  let tokenizer;
  try {
    tokenizer = new core.module.Tokenizer(vocab, {
      cleanText: true, handleChineseChars: true, stripAccents: lowercase, lowercase,
      maxInputCharsPerWord: 100, maxLength: settings.maxLength ?? 512,
    });
  } catch (error) {
    core.dispose();
    throw new TiankongError('BAD_MODEL', `tiankong: ${vocabPath}: ${describe(error)}`);
  }
  return {
    encode(text: string): Tokenized {
      const encoding = tokenizer.encode(toWellFormed(text));
      const ids = Array.from(encoding.ids);
      return {
        tokens: ids.map((id) => tokenizer.idToToken(id)),
        ids,
        offsets: ids.map((_, i) => [encoding.offsets[2 * i]!, encoding.offsets[2 * i + 1]!]),
      };
    },
    dispose() {
      tokenizer.delete();
      core.dispose();
    },
  };
}
