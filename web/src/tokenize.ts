/**
 * Node only: a standalone tokenizer (the C++ core's BERT WordPiece) for a vocab.txt, as used by
 * `tiankong tokenize`.
 */
import { readFile } from 'node:fs/promises';
import { loadEngineCore } from './core/engine-core.js';
import { encodeText, newTokenizer } from './core/tokenizer.js';
import { show } from './engine/options.js';
import { TiankongError, describe } from './errors.js';

export interface TokenizerSettings {
  /** Lowercase (and strip accents) like an uncased BERT. Default false (bert-base-chinese). */
  lowercase?: boolean;
  /** Longest encoding incl. [CLS]/[SEP] (a model's max_length). Default 512. */
  maxLength?: number;
  /**
   * What encode() does with a longer text: false (default) rejects it with TOO_LONG, as fill()
   * does; true keeps the first maxLength − 2 tokens and reports how many were dropped (`truncated`).
   */
  truncate?: boolean;
}

export interface Tokenized {
  tokens: string[];
  /** Including [CLS] and [SEP]. */
  ids: number[];
  /** [start, end) UTF-16 offsets into the text per token; [0, 0] for [CLS]/[SEP]. */
  offsets: [number, number][];
  /** With `truncate: true`, how many tokens were dropped from the end (absent when none were). */
  truncated?: number;
}

export interface TokenizerHandle {
  encode(text: string): Tokenized;
  dispose(): void;
}

/**
 * A tokenizer for the vocab.txt at `vocabPath` (BERT WordPiece, as the models use it). Rejects with
 * BAD_MODEL when the file cannot be read or is not a vocabulary, BAD_OPTION for bad settings.
 * encode() throws TOO_LONG for a text of more than maxLength tokens unless `truncate` is set.
 *
 * @example
 * ```ts
 * const tokenizer = await createTokenizer('model/default/vocab.txt');
 * console.log(tokenizer.encode('春眠不觉晓').tokens); // ['[CLS]', '春', '眠', '不', '觉', '晓', '[SEP]']
 * tokenizer.dispose();
 * ```
 */
export async function createTokenizer(vocabPath: string, settings: TokenizerSettings = {}): Promise<TokenizerHandle> {
  if (typeof vocabPath !== 'string')
    throw new TiankongError('BAD_OPTION', `tiankong: the vocab path must be a string, got ${show(vocabPath)}`);
  if (typeof settings !== 'object' || settings === null) {
    throw new TiankongError('BAD_OPTION', `tiankong: settings must be an object, got ${show(settings)}`);
  }
  const lowercase = settings.lowercase ?? false;
  const maxLength = settings.maxLength ?? 512;
  const truncate = settings.truncate ?? false;
  for (const [name, value] of [
    ['lowercase', lowercase],
    ['truncate', truncate],
  ] as const) {
    if (typeof value !== 'boolean')
      throw new TiankongError('BAD_OPTION', `tiankong: ${name} must be true or false, got ${show(value)}`);
  }
  if (!Number.isInteger(maxLength) || maxLength < 2 || maxLength > 2 ** 30) {
    throw new TiankongError(
      'BAD_OPTION',
      `tiankong: maxLength must be an integer from 2 to ${2 ** 30}, got ${show(maxLength)}`,
    );
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
    tokenizer = newTokenizer(
      core.module,
      vocab,
      { cleanText: true, handleChineseChars: true, stripAccents: lowercase, lowercase, maxLength },
      vocabPath,
    );
  } catch (error) {
    core.dispose();
    throw error;
  }
  return {
    encode(text: string): Tokenized {
      if (typeof text !== 'string')
        throw new TiankongError('BAD_OPTION', `tiankong: text must be a string, got ${show(text)}`);
      const { encoding } = encodeText(tokenizer, text);
      const { truncatedTokens } = encoding;
      if (truncatedTokens > 0 && !truncate) {
        throw new TiankongError(
          'TOO_LONG',
          `tiankong: the text is ${encoding.ids.length - 2 + truncatedTokens} tokens long ` +
            `but the limit is ${maxLength - 2} (plus [CLS] and [SEP]); shorten it, or truncate explicitly ` +
            '(createTokenizer(vocab, { truncate: true }), CLI: tokenize --truncate)',
        );
      }
      const ids = Array.from(encoding.ids);
      return {
        tokens: ids.map((id) => tokenizer.idToToken(id)),
        ids,
        offsets: ids.map((_, i) => [encoding.offsets[2 * i]!, encoding.offsets[2 * i + 1]!]),
        ...(truncatedTokens > 0 ? { truncated: truncatedTokens } : {}),
      };
    },
    dispose() {
      tokenizer.delete();
      core.dispose();
    },
  };
}
