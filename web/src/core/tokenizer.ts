/**
 * The core's BERT WordPiece tokenizer as the runtime builds and calls it: one place that turns
 * tokenizer settings into the core's TokenizerOptions (used by the engine, from model.json, and
 * by `createTokenizer`, from its arguments), and one encode step that makes the text well formed.
 */
import { TiankongError, describe } from '../errors.js';
import type { CoreModule, EncodeResult, TokenizerOptions, WasmTokenizer } from './core-module.js';
import { toWellFormed } from './text.js';

/** BERT WordPiece never splits words longer than this (the Hugging Face default). */
export const MAX_INPUT_CHARS_PER_WORD = 100;

/** How a vocabulary is tokenized (model.json's "tokenizer" block, plus the model's max_length). */
export interface WordPieceSettings {
  lowercase: boolean;
  stripAccents: boolean;
  cleanText: boolean;
  handleChineseChars: boolean;
  /** Longest encoding, including [CLS] and [SEP]. */
  maxLength: number;
}

/** The core's options for these settings. Settings are checked by the caller; the core only checks types. */
export function tokenizerOptions(settings: WordPieceSettings): TokenizerOptions {
  return { ...settings, maxInputCharsPerWord: MAX_INPUT_CHARS_PER_WORD };
}

/**
 * Builds a tokenizer for `vocabBytes` (vocab.txt). A UTF-8 byte-order mark at the start (editors
 * on Windows add one) is not part of the first token. Throws BAD_MODEL `tiankong: <where>: …` when
 * the core rejects the vocabulary. The caller owns the result (`delete()` it).
 */
export function newTokenizer(
  module: CoreModule,
  vocabBytes: Uint8Array,
  settings: WordPieceSettings,
  where: string,
): WasmTokenizer {
  const bom = vocabBytes[0] === 0xef && vocabBytes[1] === 0xbb && vocabBytes[2] === 0xbf;
  try {
    return new module.Tokenizer(bom ? vocabBytes.subarray(3) : vocabBytes, tokenizerOptions(settings));
  } catch (error) {
    throw new TiankongError('BAD_MODEL', `tiankong: ${where}: ${describe(error)}`);
  }
}

/** A text after encoding: `text` is the well-formed text that `encoding.offsets` index. */
export interface EncodedText {
  text: string;
  encoding: EncodeResult;
}

/** Encodes a string (checked by the caller) after replacing lone surrogates (see text.ts). */
export function encodeText(tokenizer: WasmTokenizer, text: string): EncodedText {
  const wellFormed = toWellFormed(text);
  return { text: wellFormed, encoding: tokenizer.encode(wellFormed) };
}
