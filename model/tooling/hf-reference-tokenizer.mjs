// Builds Hugging Face's own BERT WordPiece tokenizer (npm `tokenizers`, the Rust implementation)
// for any BERT vocab.txt, with bert-base-chinese's pipeline: BertNormalizer(clean_text,
// handle_chinese_chars, no accent stripping, lowercase as given) -> BertPreTokenizer ->
// WordPiece(##, 100 chars) -> [CLS] A [SEP]. It is the independent reference our C++
// tokenizer is tested against, and the tokenizer that encodes the training corpus.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');

/** Splits a vocab.txt on '\n' only (entries such as U+2028 must survive). */
export function readVocab(path) {
  const lines = readFileSync(path, 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * @param {string[]} vocab tokens in id order
 * @param {{lowercase?: boolean}} [options]
 * @returns {import('tokenizers').Tokenizer}
 */
export function referenceTokenizer(vocab, { lowercase = false } = {}) {
  const ids = Object.fromEntries(vocab.map((token, id) => [token, id]));
  const special = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  for (const token of special) {
    if (!(token in ids)) throw new Error(`vocab has no ${token}`);
  }
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: special.map((content) => ({
      id: ids[content],
      special: true,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
    })),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: ids,
    },
  };
  return Tokenizer.fromString(JSON.stringify(json));
}
