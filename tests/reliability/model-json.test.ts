// model.json in Node (built package): every field the runtime reads is checked for its type and
// range with a message naming the field, what it must be and what it is; the sizes model.json
// states are compared with the ones its files state (model.onnx's initializer shapes, head.bin's
// and memory.bin's headers), naming both numbers and both files. Each case was reported by a
// tester: before, a wrong type read as "missing", an id out of range was blamed on vocab.txt
// ("puts it at undefined"), and too-small or huge sizes, an empty outputs list or an unused file
// entry with bytes -1 loaded. The models that ship or are exported still load.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, missingPrerequisite, repoRoot, testModelDir } from '../runtime/fixtures.js';
import { makeFaultyGraphs, modelVariant } from './helpers.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

type Manifest = Record<string, any>;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe.skipIf(missing !== null)('model.json checks (Node)', () => {
  let modelDir: string;
  let work: string;
  let createFillMask: Awaited<ReturnType<typeof api>>['createFillMask'];
  let TiankongError: Awaited<ReturnType<typeof api>>['TiankongError'];

  beforeAll(async () => {
    modelDir = testModelDir();
    work = mkdtempSync(join(tmpdir(), 'tiankong-model-json-'));
    ({ createFillMask, TiankongError } = await api());
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** The error createFillMask rejects with (it must be a TiankongError). */
  async function rejection(model: NonNullable<Parameters<typeof createFillMask>[0]>['model']) {
    const error = await createFillMask({ model, backend: 'wasm' }).then(
      async (loaded) => {
        await loaded.dispose();
        return null;
      },
      (e: unknown) => e,
    );
    expect(error, 'a TiankongError').toBeInstanceOf(TiankongError);
    return error as InstanceType<typeof TiankongError>;
  }

  /** A copy of `from` whose model.json is `change`d (the files keep their hashes: they are not touched). */
  const edited = (name: string, change: (m: Manifest) => unknown, from = modelDir) =>
    modelVariant(
      from,
      join(work, name),
      (d) => {
        const manifest = JSON.parse(readFileSync(join(d, 'model.json'), 'utf8'));
        const replaced = change(manifest);
        writeFileSync(join(d, 'model.json'), JSON.stringify(replaced === undefined ? manifest : replaced));
      },
      true,
    );

  // [case, edit of model.json, the message]. Every message starts with the model.json path.
  const FIELD_FAULTS: Array<[string, (m: Manifest) => unknown, RegExp]> = [
    [
      'a special token model.json names that tiankong does not read',
      (m) => void (m.special_tokens.bos = 99999),
      /special_tokens has "bos": 99999, which tiankong does not read \(it reads pad, unk, cls, sep, mask\); remove it/,
    ],
    [
      'a special token id outside the vocabulary',
      (m) => void (m.special_tokens.mask = 99999),
      /special_tokens\.mask must be an integer from 0 to 1625 \(a token id of the 1626-token vocabulary, architecture\.vocab_size\), got 99999$/,
    ],
    [
      'a negative special token id',
      (m) => void (m.special_tokens.cls = -1),
      /special_tokens\.cls must be an integer from 0 to 1625 .*, got -1$/,
    ],
    [
      'a special token id given as a string',
      (m) => void (m.special_tokens.mask = '4'),
      /special_tokens\.mask must be an integer from 0 to 1625 .*, got "4" \(a string\)$/,
    ],
    [
      'two special tokens with one id',
      (m) => void (m.special_tokens.unk = 0),
      /special_tokens\.pad and special_tokens\.unk are both 0; each is a different line of vocab\.txt/,
    ],
    [
      'tokenizer.lowercase given as a string',
      (m) => void (m.tokenizer.lowercase = 'false'),
      /tokenizer\.lowercase must be true or false \(a JSON boolean\), got "false" \(a string\)$/,
    ],
    [
      'tokenizer.clean_text missing',
      (m) => void delete m.tokenizer.clean_text,
      /tokenizer\.clean_text must be true or false \(a JSON boolean\), got nothing \(the field is missing\)$/,
    ],
    [
      'model.json that is a list',
      () => [],
      /model\.json: the manifest must be a JSON object \(\{ "format": "tiankong-model\/1", … \}\), got \[\] \(a list\)$/,
    ],
    [
      'model.json that is a string',
      () => 'model',
      /model\.json: the manifest must be a JSON object .*got "model" \(a string\)$/,
    ],
    ['model.json that is null', () => null, /model\.json: the manifest must be a JSON object .*got null$/],
    [
      'an empty outputs list',
      (m) => void (m.outputs = []),
      /outputs must be a list of the graph's output names that holds "logits" \(what a mask-only model is read from; scripts\/export-model writes \["logits"\]\), got \[\] \(a list\)$/,
    ],
    [
      'max_length 3 (no room for a sentence around the [MASK])',
      (m) => void (m.max_length = 3),
      /max_length must be an integer from 8 to 1048576 \(the longest input in tokens, \[CLS\] and \[SEP\] included; under 8 no sentence fits around a \[MASK\]\), got 3$/,
    ],
    [
      'architecture.hidden_size 1e9',
      (m) => void (m.architecture.hidden_size = 1e9),
      /architecture\.hidden_size must be an integer from 1 to 16384 \(the width of the hidden states; the core's output layer reads at most 16384\), got 1000000000$/,
    ],
    [
      'architecture.num_hidden_layers 1e9',
      (m) => void (m.architecture.num_hidden_layers = 1e9),
      /architecture\.num_hidden_layers must be an integer from 1 to 256 \(the number of transformer layers; .*\), got 1000000000$/,
    ],
    [
      'architecture.num_attention_heads that does not divide hidden_size',
      (m) => void (m.architecture.num_attention_heads = 5),
      /architecture\.num_attention_heads must divide architecture\.hidden_size 64 .*, got 5$/,
    ],
    [
      'architecture.vocab_size as a string',
      (m) => void (m.architecture.vocab_size = '1626'),
      /architecture\.vocab_size must be an integer from 1 to 16777216 .*, got "1626" \(a string\)$/,
    ],
    [
      'an unused files entry with bytes -1',
      (m) => void (m.files['notes.txt'] = { sha256: '0'.repeat(64), bytes: -1 }),
      /files\["notes\.txt"\]\.bytes must be the file's size, an integer from 1 to 2147483647, got -1$/,
    ],
    [
      'an unused files entry that is not a plain file name',
      (m) => void (m.files['../other/vocab.txt'] = { sha256: '0'.repeat(64), bytes: 10 }),
      /a key of files is "\.\.\/other\/vocab\.txt", which is not a file name inside the model directory/,
    ],
    [
      'memory.ngrams that is not a file name',
      (m) => void (m.memory = { file: 'memory.bin', ngrams: 7 }),
      /memory\.ngrams must name the memory's second file \("memory-ngrams\.bin"\), got 7$/,
    ],
    [
      'memory.ngrams naming the memory file itself',
      (m) => {
        m.memory = { file: 'memory.bin', ngrams: 'memory.bin' };
        m.files['memory.bin'] = { sha256: '0'.repeat(64), bytes: 10 };
      },
      /memory\.ngrams names "memory\.bin", which memory\.file already names; each file has one role/,
    ],
    [
      'files that is a list',
      (m) => void (m.files = []),
      /files must be an object \(\{ "model\.onnx": \{ "sha256": …, "bytes": … \}, … \}\), got \[\] \(a list\)$/,
    ],
    [
      'a head block on a mask-only model that is not one',
      (m) => void (m.head = 'head.bin'),
      /head must be \{ "file": "head\.bin", "dtype": "int8" \| "f16" \| "f32" \}, got "head\.bin" \(a string\)$/,
    ],
    [
      'an input tiankong does not feed',
      (m) => void m.inputs.push('position_ids'),
      /inputs lists "position_ids", which is not an input tiankong feeds \(input_ids, inputs_embeds, attention_mask, token_type_ids, mask_positions\)$/,
    ],
    ['name that is a number', (m) => void (m.name = 5), /name must be the model's name .*, got 5$/],
  ];

  test.each(FIELD_FAULTS)(
    '%s: BAD_MODEL naming the field, its range or type, and model.json',
    async (name, change, message) => {
      const dir = edited(name.replace(/\W+/g, '-'), change);
      const error = await rejection(dir);
      expect(error.code, error.message).toBe('BAD_MODEL');
      expect(error.message).toMatch(
        new RegExp(`^tiankong: ${join(dir, 'model.json').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `),
      );
      expect(error.message).toMatch(message);
      expect(error.message).not.toMatch(/undefined/);
    },
  );

  test('a manifest given as an object is checked the same way (the message names model.manifest)', async () => {
    const manifest = JSON.parse(readFileSync(join(modelDir, 'model.json'), 'utf8'));
    const bytes = {
      modelBytes: readFileSync(join(modelDir, 'model.onnx')),
      vocabBytes: readFileSync(join(modelDir, 'vocab.txt')),
    };
    const error = await rejection({
      ...bytes,
      manifest: { ...manifest, special_tokens: { ...manifest.special_tokens, mask: '4' } },
    });
    expect(error.code).toBe('BAD_MODEL');
    expect(error.message).toMatch(
      /^tiankong: model\.manifest: special_tokens\.mask must be an integer from 0 to 1625 .*got "4" \(a string\)$/,
    );
    // Values JSON cannot carry still get a message (not a TypeError from JSON.stringify).
    const big = await rejection({ ...bytes, manifest: { ...manifest, max_length: 128n } });
    expect(big.message).toMatch(/max_length must be an integer from 8 to 1048576 .*, got 128n$/);
    const nan = await rejection({ ...bytes, manifest: { ...manifest, max_length: NaN } });
    expect(nan.message).toMatch(/, got NaN$/);
  });

  // Sizes model.json states against the ones its files state.
  const SIZE_FAULTS: Array<[string, (m: Manifest) => void, RegExp]> = [
    [
      'hidden_size that is not the graph width',
      (m) => void (m.architecture.hidden_size = 128),
      /model\.json says architecture\.hidden_size is 128 but model\.onnx's bert\.embeddings\.position_embeddings\.weight \[128, 64\] is 64 wide; the files are from different models/,
    ],
    [
      'max_position_embeddings that is not the graph position table',
      (m) => void (m.architecture.max_position_embeddings = 512),
      /model\.json says architecture\.max_position_embeddings is 512 but model\.onnx's bert\.embeddings\.position_embeddings\.weight \[128, 64\] has 128 positions/,
    ],
    [
      'num_hidden_layers that is not the graph layer count',
      (m) => void (m.architecture.num_hidden_layers = 3),
      /model\.json says architecture\.num_hidden_layers is 3 but model\.onnx has weights for 2 layers \(layer\.0 … layer\.1\)/,
    ],
  ];

  test.each(SIZE_FAULTS)('%s: BAD_MODEL naming both numbers and both files', async (name, change, message) => {
    const error = await rejection(edited(name.replace(/\W+/g, '-'), change));
    expect(error.code, error.message).toBe('BAD_MODEL');
    expect(error.message).toMatch(message);
  });

  test("vocab_size that vocab.txt agrees with but model.onnx's word table does not", async () => {
    // Before, both agreeing on 1627 loaded, and every fill failed on the logits' shape.
    const dir = modelVariant(modelDir, join(work, 'vocab-1627'), (d) => {
      writeFileSync(join(d, 'vocab.txt'), readFileSync(join(d, 'vocab.txt'), 'utf8') + '新词\n');
      const manifest = JSON.parse(readFileSync(join(d, 'model.json'), 'utf8'));
      manifest.architecture.vocab_size = 1627;
      writeFileSync(join(d, 'model.json'), JSON.stringify(manifest));
    });
    const error = await rejection(dir);
    expect(error.code, error.message).toBe('BAD_MODEL');
    expect(error.message).toMatch(
      /model\.json says architecture\.vocab_size is 1627 but model\.onnx's bert\.embeddings\.word_embeddings\.weight\.int8 \[1626, 64\] has 1626 rows, one per token/,
    );
  });

  test('a graph without a position table: max_length is bounded by max_position_embeddings', async () => {
    const graphs = join(work, 'graphs');
    makeFaultyGraphs(graphs, 1626);
    const dir = modelVariant(modelDir, join(work, 'no-position-table'), (d) => {
      copyFileSync(join(graphs, 'wrong-vocab.onnx'), join(d, 'model.onnx'));
      const manifest = JSON.parse(readFileSync(join(d, 'model.json'), 'utf8'));
      manifest.max_length = 256;
      writeFileSync(join(d, 'model.json'), JSON.stringify(manifest));
    });
    const error = await rejection(dir);
    expect(error.code, error.message).toBe('BAD_MODEL');
    expect(error.message).toMatch(
      /model\.json's max_length 256 is longer than the model was built for \(architecture\.max_position_embeddings is 128\); set max_length to at most 128$/,
    );
  });

  test('head.bin against model.json and model.onnx (core models)', async () => {
    const core = join(dirname(modelDir), 'core');
    const f16 = join(dirname(modelDir), 'core-f16');
    // model.json's head.dtype must be the table type head.bin holds.
    const dtype = await rejection(edited('head-dtype', (m) => void (m.head.dtype = 'int8'), f16));
    expect(dtype.code).toBe('BAD_MODEL');
    expect(dtype.message).toMatch(
      /model\.json says head\.dtype is "int8" but head\.bin holds a f16 table; the files are from different models/,
    );
    // Another model's head.bin (the default model's: 10358 × 224) with hidden_size left out of
    // model.json: the graph and head.bin disagree, and the message names both.
    const foreign = modelVariant(core, join(work, 'foreign-head'), (d) => {
      copyFileSync(join(repoRoot, 'model', 'default', 'head.bin'), join(d, 'head.bin'));
      const manifest = JSON.parse(readFileSync(join(d, 'model.json'), 'utf8'));
      delete manifest.architecture.hidden_size;
      writeFileSync(join(d, 'model.json'), JSON.stringify(manifest));
    });
    const error = await rejection(foreign);
    expect(error.code).toBe('BAD_MODEL');
    expect(error.message).toMatch(
      /model\.onnx's bert\.embeddings\.position_embeddings\.weight \[128, 64\] is 64 wide but head\.bin holds 224-wide rows/,
    );
    // With hidden_size declared, model.json's number is the one compared.
    const declared = modelVariant(core, join(work, 'foreign-head-declared'), (d) =>
      copyFileSync(join(repoRoot, 'model', 'default', 'head.bin'), join(d, 'head.bin')),
    );
    expect((await rejection(declared)).message).toMatch(
      /model\.json says architecture\.hidden_size is 64 but head\.bin holds 224-wide rows/,
    );
  });

  test("another model's memory.bin: one message naming both vocabulary sizes, saying once how to fix it", async () => {
    const dir = modelVariant(modelDir, join(work, 'foreign-memory'), (d) => {
      const memory = readFileSync(join(repoRoot, 'model', 'default', 'memory.bin'));
      writeFileSync(join(d, 'memory.bin'), memory);
      const manifest = JSON.parse(readFileSync(join(d, 'model.json'), 'utf8'));
      manifest.memory = { file: 'memory.bin' };
      manifest.files['memory.bin'] = { sha256: sha256(memory), bytes: memory.byteLength };
      writeFileSync(join(d, 'model.json'), JSON.stringify(manifest));
    });
    const error = await rejection(dir);
    expect(error.code).toBe('BAD_MODEL');
    expect(error.message).toBe(
      `tiankong: ${dir}: memory.bin was built for another vocabulary (10358 tokens) than the model's ` +
        '(model.json says architecture.vocab_size is 1626); rebuild it for this model (scripts/build-memory) or ' +
        'load the model without it: createFillMask({ memory: false })',
    );
    // Without the memory the model loads.
    const without = await createFillMask({ model: dir, backend: 'wasm', memory: false });
    expect((await without.fill('春眠不觉[MASK]')).masks).toHaveLength(1);
    await without.dispose();
  });

  test('the exported and shipped models pass every check and load', async () => {
    const dirs = [
      modelDir,
      join(dirname(modelDir), 'core'),
      join(dirname(modelDir), 'core-f16'),
      join(dirname(modelDir), 'with-memory'),
      join(repoRoot, 'model', 'default'),
    ];
    for (const dir of dirs) {
      const loaded = await createFillMask({ model: dir, backend: 'wasm', threads: 1 });
      try {
        expect((await loaded.fill('春眠不觉[MASK]')).masks, dir).toHaveLength(1);
      } finally {
        await loaded.dispose();
      }
    }
    // Extra fields model.json does not define (quantization details, memory.tuned) are kept as they are.
    const extra = edited('extra-fields', (m) => void (m.notes = { by: 'a person' }));
    const loaded = await createFillMask({ model: extra, backend: 'wasm' });
    await loaded.dispose();
  });
});
