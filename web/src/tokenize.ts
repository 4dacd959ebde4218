/**
 * Node only: a standalone tokenizer (the C++ core's BERT WordPiece) for a vocab.txt, as used by
 * `tiankong tokenize`.
 */
import { readFile } from 'node:fs/promises';
import { loadEngineCore } from './core/engine-core.js';
import { encodeText, newTokenizer } from './core/tokenizer.js';
import { TiankongError, describe } from './errors.js';

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
 * A tokenizer for the vocab.txt at `vocabPath` (BERT WordPiece, as the models use it). Rejects with
 * BAD_MODEL when the file cannot be read or is not a vocabulary, BAD_OPTION for bad settings.
 *
 * @example
 * ```ts
 * const tokenizer = await createTokenizer('model/default/vocab.txt');
 * console.log(tokenizer.encode('春眠不觉晓').tokens); // ['[CLS]', '春', '眠', '不', '觉', '晓', '[SEP]']
 * tokenizer.dispose();
 * ```
 */
export async function createTokenizer(vocabPath: string, settings: TokenizerSettings = {}): Promise<TokenizerHandle> {
  const lowercase = settings.lowercase ?? false;
  const maxLength = settings.maxLength ?? 512;
  if (typeof lowercase !== 'boolean') {
    throw new TiankongError('BAD_OPTION', `tiankong: lowercase must be true or false, got ${JSON.stringify(lowercase)}`);
  }
  if (!Number.isInteger(maxLength) || maxLength < 2 || maxLength > 2 ** 30) {
    throw new TiankongError('BAD_OPTION', `tiankong: maxLength must be an integer from 2 to ${2 ** 30}, got ${maxLength}`);
  }
  let vocab: Uint8Array;
  try {
    vocab = new Uint8Array(await readFile(vocabPath));
  } catch (error) {
    throw new TiankongError('BAD_MODEL', `tiankong: cannot read the vocab ${vocabPath}: ${describe(error)}`);
  }
  const core = await loadEngineCore();
  let tokenizer;
  try {
    tokenizer = newTokenizer(core.module, vocab, { cleanText: true, handleChineseChars: true, stripAccents: lowercase, lowercase, maxLength },
      vocabPath);
  } catch (error) {
    core.dispose();
    throw error;
  }
  return {
    encode(text: string): Tokenized {
      if (typeof text !== 'string') {
        throw new TiankongError('BAD_OPTION', `tiankong: text must be a string, got ${text === null ? 'null' : typeof text}`);
      }
      const { encoding } = encodeText(tokenizer, text);
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
