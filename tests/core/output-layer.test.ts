// The wasm output layer (both builds) with a float16 head.bin (dtype 3, wasm/src/output_layer.cc):
// every finite half converts to exactly its value (all 63 488 of them, as one table), the logits
// are the float64 product over those values, and NaN/infinite halves, wrong strides and
// truncated files are refused. With an int8 head.bin (dtype 1): the rows are widened to float32
// (q × scale) at load and the logits are exactly those of an f32 head.bin holding those floats —
// the hidden state is not rounded. head.bin is written here from the documented layout.
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoadedCore } from '../../web/src/core/load-core.js';
import { halfValue } from '../harness/half.js';
import { VARIANTS, loadBuild, missingPrerequisite, rng } from './core-builds.js';

const missing = missingPrerequisite();
if (missing) console.warn(missing);

/** An f16 head.bin: `halves` [vocab × hidden] bit patterns, rows padded to an even stride. */
function f16Head(
  vocab: number,
  hidden: number,
  halves: Uint16Array,
  bias: Float32Array,
  stride = hidden + (hidden % 2),
) {
  const tableBytes = 2 * vocab * stride;
  const bytes = new Uint8Array(32 + tableBytes + 4 * vocab);
  const view = new DataView(bytes.buffer);
  bytes.set(new TextEncoder().encode('TKOUTPUT'));
  [1, 3, vocab, hidden, stride].forEach((x, i) => view.setUint32(8 + 4 * i, x, true));
  for (let v = 0; v < vocab; v++) {
    for (let k = 0; k < Math.min(hidden, stride); k++)
      view.setUint16(32 + 2 * (v * stride + k), halves[v * hidden + k]!, true);
  }
  bias.forEach((b, v) => view.setFloat32(32 + tableBytes + 4 * v, b, true));
  view.setUint32(28, crc32(bytes.subarray(32)) >>> 0, true);
  return bytes;
}

/** An int8 head.bin: `q` [vocab × hidden] in -127..127, a scale per row, rows padded to 16 entries. */
function int8Head(vocab: number, hidden: number, q: Int8Array, scale: Float32Array, bias: Float32Array) {
  const stride = Math.ceil(hidden / 16) * 16;
  const bytes = new Uint8Array(32 + vocab * stride + 8 * vocab);
  const view = new DataView(bytes.buffer);
  bytes.set(new TextEncoder().encode('TKOUTPUT'));
  [1, 1, vocab, hidden, stride].forEach((x, i) => view.setUint32(8 + 4 * i, x, true));
  for (let v = 0; v < vocab; v++)
    for (let k = 0; k < hidden; k++) view.setInt8(32 + v * stride + k, q[v * hidden + k]!);
  scale.forEach((x, v) => view.setFloat32(32 + vocab * stride + 4 * v, x, true));
  bias.forEach((b, v) => view.setFloat32(32 + vocab * stride + 4 * vocab + 4 * v, b, true));
  view.setUint32(28, crc32(bytes.subarray(32)) >>> 0, true);
  return bytes;
}

/** An f32 head.bin holding `table` [vocab × hidden]. */
function f32Head(vocab: number, hidden: number, table: Float32Array, bias: Float32Array) {
  const bytes = new Uint8Array(32 + 4 * vocab * hidden + 4 * vocab);
  const view = new DataView(bytes.buffer);
  bytes.set(new TextEncoder().encode('TKOUTPUT'));
  [1, 2, vocab, hidden, hidden].forEach((x, i) => view.setUint32(8 + 4 * i, x, true));
  table.forEach((x, i) => view.setFloat32(32 + 4 * i, x, true));
  bias.forEach((b, v) => view.setFloat32(32 + 4 * vocab * hidden + 4 * v, b, true));
  view.setUint32(28, crc32(bytes.subarray(32)) >>> 0, true);
  return bytes;
}

test('halfValue (the tests’ own decoder) gives the well-known halves', () => {
  const cases: [number, number][] = [
    [0x3c00, 1],
    [0xc000, -2],
    [0x7bff, 65504],
    [0x0400, 2 ** -14],
    [0x0001, 2 ** -24],
    [0x03ff, 1023 * 2 ** -24],
    [0x3555, 0.333251953125],
  ];
  for (const [bits, value] of cases) expect(halfValue(bits)).toBe(value);
  expect(Object.is(halfValue(0x8000), -0)).toBe(true);
  expect(halfValue(0x7c00)).toBe(Infinity);
  expect(halfValue(0xfc00)).toBe(-Infinity);
  expect(halfValue(0x7e00)).toBeNaN();
});

describe.skipIf(missing !== null).each(VARIANTS)('output layer, float16 table [%s build]', (variant) => {
  let core: LoadedCore;
  beforeAll(async () => {
    core = await loadBuild(variant);
  });
  afterAll(() => core?.dispose());

  // Every finite half exactly once: 63 488 = 1 984 rows × 32.
  const finite = Uint16Array.from({ length: 0x10000 }, (_, i) => i).filter((bits) => (bits & 0x7c00) !== 0x7c00);
  const [vocab, hidden] = [1984, 32];
  const bias = Float32Array.from({ length: vocab }, (_, v) => (v % 13) / 8 - 0.75);

  test('every finite half is converted to exactly its value; the logits are the product over them', () => {
    expect(finite.length).toBe(vocab * hidden);
    const layer = new core.module.OutputLayer(f16Head(vocab, hidden, finite, bias), vocab);
    try {
      expect(layer.dtype()).toBe('f16');
      expect(layer.hiddenSize()).toBe(hidden);
      const embedded = layer.embed(Int32Array.from({ length: vocab }, (_, v) => v));
      let wrong = 0;
      finite.forEach((bits, i) => {
        if (!Object.is(embedded[i], halfValue(bits))) wrong++; // -0 stays -0
      });
      expect(wrong).toBe(0);
      // Small hidden values keep the products of the ±65504 rows finite in float32.
      const random = rng(7);
      const x = Float32Array.from({ length: hidden }, () => (random() - 0.5) * 1e-3);
      const logits = layer.logits(x, 1);
      for (let v = 0; v < vocab; v++) {
        let sum = bias[v]!;
        let magnitude = Math.abs(sum);
        for (let k = 0; k < hidden; k++) {
          const product = halfValue(finite[v * hidden + k]!) * x[k]!;
          sum += product;
          magnitude += Math.abs(product);
        }
        expect(Math.abs(logits[v]! - sum)).toBeLessThanOrEqual(1e-5 * magnitude + 1e-30);
      }
    } finally {
      layer.delete();
    }
  });

  test('odd rows: an even stride; a NaN or infinite half, a wrong stride or a truncated file is refused', () => {
    const random = rng(11);
    const halves = Uint16Array.from({ length: 20 * 17 }, () => finite[Math.floor(random() * finite.length)]!);
    const bias20 = new Float32Array(20).fill(0.5);
    const good = f16Head(20, 17, halves, bias20);
    expect(good.length).toBe(32 + 2 * 20 * 18 + 4 * 20);
    const layer = new core.module.OutputLayer(good, 20);
    expect(Array.from(layer.embed(Int32Array.of(19)))).toEqual(
      Array.from(halves.subarray(19 * 17), (b) => Math.fround(halfValue(b))),
    );
    layer.delete();
    for (const bad of [0x7e00, 0xfc01, 0x7c00, 0xfc00]) {
      const broken = halves.slice();
      broken[5 * 17 + 16] = bad;
      expect(() => new core.module.OutputLayer(f16Head(20, 17, broken, bias20), 20)).toThrow(/non-finite weight/);
    }
    expect(() => new core.module.OutputLayer(f16Head(20, 17, halves, bias20, 17), 20)).toThrow(/inconsistent/);
    for (const cut of [40, 32 + 2 * 20 * 18 - 1, good.length - 1]) {
      expect(() => new core.module.OutputLayer(good.subarray(0, cut), 20)).toThrow(/truncated/);
    }
  });
});

describe.skipIf(missing !== null).each(VARIANTS)('output layer, int8 table [%s build]', (variant) => {
  let core: LoadedCore;
  beforeAll(async () => {
    core = await loadBuild(variant);
  });
  afterAll(() => core?.dispose());

  test('the rows are widened to float32 at load: logits are those of the f32 table of q × scale, bit for bit', () => {
    // 224 wide (the default model's rows, padded to 224 = 14 × 16) and 37 wide (padded to 48).
    for (const [vocab, hidden] of [
      [300, 224],
      [50, 37],
    ] as const) {
      const random = rng(vocab + hidden);
      const q = Int8Array.from({ length: vocab * hidden }, () => Math.round((random() - 0.5) * 254));
      q[0] = -127;
      q[1] = 127;
      const scale = Float32Array.from({ length: vocab }, (_, v) => (v === 3 ? 0 : 1e-3 * (1 + (v % 11))));
      const bias = Float32Array.from({ length: vocab }, () => random() - 0.5);
      const widened = Float32Array.from(q, (x, i) => Math.fround(x * scale[Math.floor(i / hidden)]!));
      const layer = new core.module.OutputLayer(int8Head(vocab, hidden, q, scale, bias), vocab);
      const reference = new core.module.OutputLayer(f32Head(vocab, hidden, widened, bias), vocab);
      try {
        expect(layer.dtype()).toBe('int8');
        const ids = Int32Array.from({ length: vocab }, (_, v) => vocab - 1 - v);
        expect(layer.embed(ids)).toEqual(reference.embed(ids));
        // Hidden states with a wide dynamic range: an int16 rounding of the row (the earlier int8
        // path) would zero the 1e-6 entries and move every logit by up to half a step of the largest.
        const x = Float32Array.from({ length: 3 * hidden }, (_, i) => (i % 5 === 0 ? 1e-6 : (random() - 0.5) * 40));
        const logits = layer.logits(x, 3);
        expect(logits).toEqual(reference.logits(x, 3));
        for (let r = 0; r < 3; r++) {
          for (let v = 0; v < vocab; v++) {
            let sum = bias[v]!;
            let magnitude = Math.abs(sum);
            for (let k = 0; k < hidden; k++) {
              const product = widened[v * hidden + k]! * x[r * hidden + k]!;
              sum += product;
              magnitude += Math.abs(product);
            }
            expect(Math.abs(logits[r * vocab + v]! - sum)).toBeLessThanOrEqual(1e-6 * magnitude + 1e-30);
          }
        }
      } finally {
        layer.delete();
        reference.delete();
      }
    }
  });
});
