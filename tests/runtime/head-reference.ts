// head.bin (the output layer of a "core" model) read from its documented layout
// (wasm/src/output_layer.cc), independently of the C++ core, and the two ends of the network it
// provides — input embeddings and logits — in float64, for references that run the core graph
// with onnxruntime-node.
import { readFileSync } from 'node:fs';
import { halfValue } from '../harness/half.js';

export interface ParsedHead {
  dtype: number; // 1 int8 rows × scale, 2 float32, 3 float16
  vocab: number;
  hidden: number;
  stride: number;
  table: Float64Array; // vocab × hidden, dequantised
  bias: Float64Array;
}

/** Parses head.bin; throws if the layout does not add up (magic, sizes, trailing bytes). */
export function readHead(path: string): ParsedHead {
  const bytes = readFileSync(path);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.subarray(0, 8).toString('latin1') !== 'TKOUTPUT') throw new Error(`${path}: no TKOUTPUT magic`);
  const [dtype, vocab, hidden, stride] = [12, 16, 20, 24].map((o) => view.getUint32(o, true)) as [
    number,
    number,
    number,
    number,
  ];
  const table = new Float64Array(vocab * hidden);
  const bias = new Float64Array(vocab);
  let at = 32;
  if (dtype === 1) {
    const scales = 32 + vocab * stride;
    for (let v = 0; v < vocab; v++) {
      const scale = view.getFloat32(scales + 4 * v, true);
      for (let k = 0; k < hidden; k++) table[v * hidden + k] = view.getInt8(at + v * stride + k) * scale;
    }
    at = scales + 4 * vocab;
  } else if (dtype === 3) {
    if (stride !== hidden + (hidden % 2)) throw new Error(`${path}: f16 rows must be padded to an even length`);
    for (let v = 0; v < vocab; v++) {
      for (let k = 0; k < hidden; k++)
        table[v * hidden + k] = halfValue(view.getUint16(at + 2 * (v * stride + k), true));
    }
    at += 2 * vocab * stride;
  } else if (dtype === 2) {
    for (let i = 0; i < vocab * hidden; i++) table[i] = view.getFloat32(at + 4 * i, true);
    at += 4 * vocab * hidden;
  } else {
    throw new Error(`${path}: unknown table type ${dtype}`);
  }
  for (let v = 0; v < vocab; v++) bias[v] = view.getFloat32(at + 4 * v, true);
  if (at + 4 * vocab !== bytes.length)
    throw new Error(`${path}: ${bytes.length} bytes, the header implies ${at + 4 * vocab}`);
  return { dtype, vocab, hidden, stride, table, bias };
}

/** The input embeddings of `ids` (rows of the table), as the core graph's inputs_embeds feed. */
export function embedRows(head: ParsedHead, ids: number[]): number[][] {
  return ids.map((id) => Array.from(head.table.subarray(id * head.hidden, (id + 1) * head.hidden)));
}

/** Logits (float64) of hidden states `hidden` (rows × head.hidden, row-major): table · h + bias. */
export function projectRows(head: ParsedHead, hidden: ArrayLike<number>, rows: number): Float64Array[] {
  const out: Float64Array[] = [];
  for (let r = 0; r < rows; r++) {
    const logits = new Float64Array(head.vocab);
    for (let v = 0; v < head.vocab; v++) {
      let sum = head.bias[v]!;
      for (let k = 0; k < head.hidden; k++) sum += head.table[v * head.hidden + k]! * hidden[r * head.hidden + k]!;
      logits[v] = sum;
    }
    out.push(logits);
  }
  return out;
}
