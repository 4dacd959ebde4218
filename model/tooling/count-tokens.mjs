// Counts how often each vocab id occurs when Hugging Face's BERT tokenizer (npm
// `tokenizers`, the reference implementation) encodes every line of the given text files;
// vocab pruning keeps the ids that occur (model/tiankong_model/prune.py runs it).
// usage: node model/tooling/count-tokens.mjs VOCAB_TXT LOWERCASE(true|false) FILE...
// stdout: {"counts": [n_0, n_1, ...], "lines": L}
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { readVocab, referenceTokenizer } from './hf-reference-tokenizer.mjs';

const [vocabPath, lowercase, ...files] = process.argv.slice(2);
if (!vocabPath || !files.length) {
  console.error('usage: count-tokens.mjs VOCAB_TXT LOWERCASE FILE...');
  process.exit(2);
}
const vocab = readVocab(vocabPath);
const tokenizer = referenceTokenizer(vocab, { lowercase: lowercase === 'true' });
const counts = new Float64Array(vocab.length);
const BATCH = 2048;
let lines = 0;

async function countBatch(batch) {
  const encodings = await tokenizer.encodeBatch(batch, false);
  for (const encoding of encodings) for (const id of encoding.getIds()) counts[id] += 1;
}

for (const file of files) {
  let batch = [];
  for await (const line of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    batch.push(line);
    lines += 1;
    if (batch.length === BATCH) {
      await countBatch(batch);
      batch = [];
    }
  }
  if (batch.length) await countBatch(batch);
}
process.stdout.write(JSON.stringify({ counts: Array.from(counts), lines }));
