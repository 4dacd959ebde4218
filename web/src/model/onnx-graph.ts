/**
 * What the runtime reads from model.onnx itself before handing it to ONNX Runtime: the size of the
 * graph's position-embedding table, so a model.json whose max_length is longer than the graph can
 * read is refused at load (BAD_MODEL) instead of failing at the first long input with ONNX
 * Runtime's own error (and its stderr output).
 *
 * A minimal protobuf walk: ModelProto.graph (field 7) → GraphProto.initializer (field 5, repeated
 * TensorProto) → TensorProto.dims (field 1, int64, packed or not) and name (field 8). Every other
 * field, the weights included, is skipped by its length, so this costs microseconds for a model of
 * megabytes. Anything unexpected means "unknown": the check is skipped (ONNX Runtime then judges
 * the file).
 */
import { TiankongError } from '../errors.js';
import type { ModelManifest } from '../types.js';

/** The position-embedding initializer of a BERT export (…embeddings.position_embeddings.weight). */
const POSITION_TABLE = /position_embeddings/;

/** Thrown inside the reader for malformed bytes; never leaves this module. */
class Malformed extends Error {}

class Reader {
  pos: number;
  constructor(
    private readonly bytes: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Malformed();
      const byte = this.bytes[this.pos++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    throw new Malformed();
  }

  /** A length-delimited field's [start, end). */
  span(): [number, number] {
    const length = this.varint();
    const start = this.pos;
    if (start + length > this.end) throw new Malformed();
    this.pos = start + length;
    return [start, start + length];
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.span();
    else if (wireType === 5) this.pos += 4;
    else throw new Malformed();
    if (this.pos > this.end) throw new Malformed();
  }

  text([start, end]: [number, number]): string {
    return new TextDecoder().decode(this.bytes.subarray(start, end));
  }
}

/** The dims of the first initializer whose name matches `pattern`, or null (none, or not readable). */
export function initializerDims(modelBytes: Uint8Array, pattern: RegExp): number[] | null {
  try {
    const model = new Reader(modelBytes, 0, modelBytes.byteLength);
    while (!model.done) {
      const key = model.varint();
      if (key !== ((7 << 3) | 2)) {
        model.skip(key & 7);
        continue;
      }
      const [gStart, gEnd] = model.span();
      const graph = new Reader(modelBytes, gStart, gEnd);
      while (!graph.done) {
        const gKey = graph.varint();
        if (gKey !== ((5 << 3) | 2)) {
          graph.skip(gKey & 7);
          continue;
        }
        const [tStart, tEnd] = graph.span();
        const tensor = new Reader(modelBytes, tStart, tEnd);
        const dims: number[] = [];
        let name = '';
        while (!tensor.done) {
          const tKey = tensor.varint();
          if (tKey === ((1 << 3) | 0)) dims.push(tensor.varint());
          else if (tKey === ((1 << 3) | 2)) {
            const packed = new Reader(modelBytes, ...tensor.span());
            while (!packed.done) dims.push(packed.varint());
          } else if (tKey === ((8 << 3) | 2)) name = tensor.text(tensor.span());
          else tensor.skip(tKey & 7);
        }
        if (pattern.test(name)) return dims;
      }
    }
  } catch (error) {
    if (error instanceof Malformed) return null;
    throw error;
  }
  return null;
}

/**
 * Throws BAD_MODEL when the longest input the graph will be given — max_length, or the window
 * threshold (or whole_up_to) when model.json reads long inputs through windows — is longer than the graph's
 * position-embedding table. Graphs without a recognisable table are not checked.
 */
export function checkPositionTable(modelBytes: Uint8Array, manifest: ModelManifest, where: string): void {
  const dims = initializerDims(modelBytes, POSITION_TABLE);
  if (dims === null || dims.length !== 2 || !(dims[0]! > 0)) return;
  const positions = dims[0]!;
  const window = manifest.window;
  const longest = Math.min(
    manifest.max_length,
    window ? Math.max(window.threshold, window.whole_up_to ?? 0) : Infinity,
  );
  if (longest > positions) {
    const field =
      longest === manifest.max_length
        ? `max_length ${manifest.max_length}`
        : longest === window?.threshold
          ? `window.threshold ${longest}`
          : `window.whole_up_to ${longest}`;
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: ${where}: model.json's ${field} is longer than model.onnx can read ` +
        `(its position table has ${positions} positions); set max_length to at most ${positions} (scripts/export-model writes it)`,
    );
  }
}
