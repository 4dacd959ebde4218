// Writes the tokenizer.json of HF's BERT tokenizer (bert-base-chinese's pipeline) for a
// vocab.txt, as saved by the reference implementation (npm `tokenizers`); the transformers.js
// export (model/tiankong_model/transformers_js.py) runs it.
// usage: node model/tooling/write-tokenizer-json.mjs VOCAB_TXT LOWERCASE(true|false) OUT_JSON
import { readVocab, referenceTokenizer } from './hf-reference-tokenizer.mjs';

const [vocabPath, lowercase, out] = process.argv.slice(2);
if (!out) {
  console.error('usage: write-tokenizer-json.mjs VOCAB_TXT LOWERCASE OUT_JSON');
  process.exit(2);
}
referenceTokenizer(readVocab(vocabPath), { lowercase: lowercase === 'true' }).save(out);
