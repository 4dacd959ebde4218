/**
 * Text → token ids for the engine: the model's tokenizer (built from model.json and checked
 * against it) and the encoding of a fill/explain text, which must hold a [MASK] and fit the model.
 */
import type { CoreModule, EncodeResult, WasmTokenizer } from '../core/core-module.js';
import { encodeText, newTokenizer } from '../core/tokenizer.js';
import { TiankongError } from '../errors.js';
import type { LoadedModel } from '../model/load.js';

/** A text after tokenization, before inference. */
export interface Encoded {
  /** The text with lone surrogates replaced (offsets index it). */
  text: string;
  ids: Int32Array;
  /** Flattened [start, end) UTF-16 offsets per token. */
  offsets: Uint32Array;
  maskPositions: Int32Array;
  /** Per mask, the sound constraint typed with it ("[MASK:shang4]"), or null. */
  maskConstraints: EncodeResult['maskConstraints'];
  /** performance.now() when the request started. */
  started: number;
  tokenizeMs: number;
}

/**
 * The tokenizer model.json describes, checked against it (vocabulary size, special-token ids).
 * Throws BAD_MODEL. The caller owns the result (`delete()` it).
 */
export function modelTokenizer(
  module: CoreModule,
  model: Pick<LoadedModel, 'manifest' | 'vocabBytes' | 'source'>,
): WasmTokenizer {
  const { manifest } = model;
  const settings = manifest.tokenizer;
  const tokenizer = newTokenizer(
    module,
    model.vocabBytes,
    {
      cleanText: settings.clean_text,
      handleChineseChars: settings.handle_chinese_chars,
      stripAccents: settings.strip_accents,
      lowercase: settings.lowercase,
      maxLength: manifest.max_length,
    },
    `${model.source}: ${settings.vocab}`,
  );
  try {
    checkVocabulary(tokenizer, model);
  } catch (error) {
    tokenizer.delete();
    throw error;
  }
  return tokenizer;
}

function checkVocabulary(tokenizer: WasmTokenizer, model: Pick<LoadedModel, 'manifest' | 'source'>): void {
  const { manifest } = model;
  const expected = manifest.architecture.vocab_size;
  if (tokenizer.vocabSize() !== expected) {
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: ${model.source}: ${manifest.tokenizer.vocab} has ${tokenizer.vocabSize()} ` +
        `tokens but model.json says the model has ${expected}; the vocab and the model do not belong together`,
    );
  }
  const actual = tokenizer.specialIds();
  for (const [name, id] of Object.entries(manifest.special_tokens)) {
    if (actual[name as keyof typeof actual] !== id) {
      throw new TiankongError(
        'BAD_MODEL',
        `tiankong: ${model.source}: model.json says special token ${name} has id ${id} ` +
          `but ${manifest.tokenizer.vocab} puts it at ${actual[name as keyof typeof actual]}`,
      );
    }
  }
}

/** TOO_LONG when the tokenizer had to drop tokens: the text's length, the model's limit, then `advice`. */
export function throwIfTooLong(encoding: EncodeResult, maxLength: number, advice: string): void {
  if (encoding.truncatedTokens > 0) {
    const tokens = encoding.ids.length - 2 + encoding.truncatedTokens;
    throw new TiankongError(
      'TOO_LONG',
      `tiankong: the text is ${tokens} tokens long but the model reads at most ` +
        `${maxLength - 2} (plus [CLS] and [SEP]); ${advice}`,
    );
  }
}

/**
 * Tokenizes a checked string that must hold at least one [MASK] and fit `maxLength` tokens
 * (with [CLS] and [SEP]); nothing is truncated. Throws EMPTY_INPUT, TOO_LONG or NO_MASK.
 */
export function encodeMasked(tokenizer: WasmTokenizer, text: string, maxLength: number, started: number): Encoded {
  const tokenizeStarted = performance.now();
  const { text: wellFormed, encoding } = encodeText(tokenizer, text);
  const tokenizeMs = performance.now() - tokenizeStarted;
  if (encoding.ids.length <= 2 && encoding.truncatedTokens === 0) {
    // Only [CLS] and [SEP]: nothing but whitespace, or characters the tokenizer drops (zero-width, control, format).
    const what =
      wellFormed.trim() === ''
        ? 'is empty'
        : 'has only invisible characters (zero-width, control or format characters)';
    throw new TiankongError(
      'EMPTY_INPUT',
      `tiankong: the text ${what}; write a sentence with [MASK] where a character is missing`,
    );
  }
  throwIfTooLong(encoding, maxLength, 'shorten it to the sentence around the [MASK]');
  if (encoding.maskPositions.length === 0) {
    throw new TiankongError(
      'NO_MASK',
      'tiankong: the text has no [MASK]; write [MASK] (or ［MASK］) where a character should be filled in',
    );
  }
  return {
    text: wellFormed,
    ids: encoding.ids,
    offsets: encoding.offsets,
    maskPositions: encoding.maskPositions,
    maskConstraints: encoding.maskConstraints,
    started,
    tokenizeMs,
  };
}
