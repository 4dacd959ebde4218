// Model faults in Node (built package, onnxruntime-web wasm): truncated and corrupted files,
// vocab/model mismatches, graphs with the wrong interface, an unknown op, NaN logits. The
// faulty ONNX graphs are hand-built with the `onnx` Python package (make-faulty-models.py).
// Every fault is a TiankongError with a specific message, at load time where it can be known
// then, else at the first fill; a healthy engine in the same process is unaffected.
// tests/runtime/errors.test.ts already covers: no directory, no vocab, full-logits export,
// short vocab, "not a protobuf", bad manifest format, a tampered last byte.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FillMaskModel, TiankongErrorCode } from '../../web/src/index.js';
import { api, missingPrerequisite, testModelDir } from '../runtime/fixtures.js';
import { makeFaultyGraphs, modelVariant } from './helpers.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

describe.skipIf(missing !== null)('model faults (Node)', () => {
  let modelDir: string;
  let work: string;
  let healthy: FillMaskModel;
  let createFillMask: Awaited<ReturnType<typeof api>>['createFillMask'];
  let TiankongError: Awaited<ReturnType<typeof api>>['TiankongError'];
  let baseline: string;

  beforeAll(async () => {
    modelDir = testModelDir();
    work = mkdtempSync(join(tmpdir(), 'tiankong-model-faults-'));
    makeFaultyGraphs(join(work, 'graphs'), 1626);
    ({ createFillMask, TiankongError } = await api());
    healthy = await createFillMask({ model: modelDir, backend: 'wasm', cache: { maxEntries: 0 } });
    baseline = JSON.stringify((await healthy.fill('春眠不觉[MASK]')).masks);
  });
  afterAll(async () => {
    await healthy?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  async function rejection(promise: Promise<unknown>): Promise<InstanceType<typeof TiankongError>> {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error, 'a TiankongError').toBeInstanceOf(TiankongError);
    return error as InstanceType<typeof TiankongError>;
  }

  const graph = (name: string) => (dir: string) => copyFileSync(join(work, 'graphs', name), join(dir, 'model.onnx'));
  const truncate = (dir: string) => {
    const bytes = readFileSync(join(dir, 'model.onnx'));
    writeFileSync(join(dir, 'model.onnx'), bytes.subarray(0, bytes.length >> 1));
  };
  const editVocab = (change: (lines: string[]) => string[]) => (dir: string) => {
    const lines = readFileSync(join(dir, 'vocab.txt'), 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    writeFileSync(join(dir, 'vocab.txt'), change(lines).join('\n') + '\n');
  };

  const LOAD_FAULTS: Array<[string, (dir: string) => void, boolean, TiankongErrorCode, RegExp]> = [
    [
      'truncated model.onnx (manifest intact)',
      truncate,
      true,
      'INTEGRITY',
      /model\.onnx has \d+ bytes but model\.json says \d+; the file is truncated/,
    ],
    [
      'truncated model.onnx (manifest re-hashed)',
      truncate,
      false,
      'BAD_MODEL',
      /model\.onnx cannot be loaded by ONNX Runtime.*protobuf parsing failed/,
    ],
    [
      'one corrupted byte in the middle',
      (d) => {
        const bytes = readFileSync(join(d, 'model.onnx'));
        bytes[bytes.length >> 1]! ^= 0x40;
        writeFileSync(join(d, 'model.onnx'), bytes);
      },
      true,
      'INTEGRITY',
      /sha256 [0-9a-f]{64} but model\.json says [0-9a-f]{64}; the file is corrupt/,
    ],
    [
      'vocab with one token more than the model',
      editVocab((l) => [...l, '新词']),
      false,
      'BAD_MODEL',
      /1627 tokens but model\.json says the model has 1626/,
    ],
    [
      'vocab without [MASK]',
      editVocab((l) => l.map((t) => (t === '[MASK]' ? '[MASK2]' : t))),
      false,
      'BAD_MODEL',
      /vocab\.txt.*\[MASK\]/,
    ],
    [
      'vocab with a duplicate token',
      editVocab((l) => [...l.slice(0, -1), l[10]!]),
      false,
      'BAD_MODEL',
      /vocab\.txt.*line 1626 repeats the token/,
    ],
    [
      'vocab that is not UTF-8',
      (d) =>
        writeFileSync(
          join(d, 'vocab.txt'),
          Buffer.concat([readFileSync(join(d, 'vocab.txt')), Buffer.from([0xff, 0xfe, 0x0a])]),
        ),
      false,
      'BAD_MODEL',
      /vocab\.txt/,
    ],
    [
      'graph without mask_positions',
      graph('no-mask-positions.onnx'),
      false,
      'BAD_MODEL',
      /inputs \[attention_mask, input_ids, positions\] but model\.json declares \[attention_mask, input_ids, mask_positions\]/,
    ],
    [
      'graph with an unknown op',
      graph('unsupported-op.onnx'),
      false,
      'BAD_MODEL',
      /cannot be loaded by ONNX Runtime \(wasm\).*FancyGelu.*not a registered/,
    ],
    [
      'model.json that is not JSON',
      (d) => writeFileSync(join(d, 'model.json'), '{"format": "tiankong-model/1",'),
      true,
      'BAD_MODEL',
      /model\.json/,
    ],
    [
      'model.json without the model file entry',
      (d) => {
        const manifest = JSON.parse(readFileSync(join(d, 'model.json'), 'utf8'));
        delete manifest.files['model.onnx'];
        writeFileSync(join(d, 'model.json'), JSON.stringify(manifest));
      },
      true,
      'BAD_MODEL',
      /model\.onnx/,
    ],
  ];

  test.each(LOAD_FAULTS)('%s: rejected at load', async (name, edit, keepHashes, code, message) => {
    const dir = modelVariant(modelDir, join(work, name.replace(/\W+/g, '-')), edit, keepHashes);
    const error = await rejection(createFillMask({ model: dir, backend: 'wasm' }));
    expect(error.code, error.message).toBe(code);
    expect(error.message).toMatch(message);
    expect(JSON.stringify((await healthy.fill('春眠不觉[MASK]')).masks)).toBe(baseline);
  });

  const FILL_FAULTS: Array<[string, string, RegExp]> = [
    [
      'logits narrower than the vocab',
      'wrong-vocab.onnx',
      /logits of shape \[1, [12], 1000\], expected \[1, [12], 1626\]/,
    ],
    ['NaN logits', 'nan-logits.onnx', /unusable logits .*NaN.*re-export/],
    ['int32 inputs', 'int32-inputs.onnx', /ONNX Runtime failed to run the model.*expected: \(tensor\(int32\)\)/],
  ];

  test.each(FILL_FAULTS)('%s: loads, then every fill is BAD_MODEL, nothing is cached', async (name, file, message) => {
    const dir = modelVariant(modelDir, join(work, name.replace(/\W+/g, '-')), graph(file));
    const broken = await createFillMask({ model: dir, backend: 'wasm' });
    try {
      for (const text of ['春[MASK]', '春[MASK]', '[MASK][MASK]']) {
        const error = await rejection(broken.fill(text));
        expect(error.code, error.message).toBe('BAD_MODEL');
        expect(error.message).toMatch(message);
      }
      expect(broken.stats().cache.entries).toBe(0);
    } finally {
      await broken.dispose();
    }
    expect(JSON.stringify((await healthy.fill('春眠不觉[MASK]')).masks)).toBe(baseline);
  });
});
