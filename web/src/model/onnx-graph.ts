/**
 * What the runtime reads from model.onnx itself before handing it to ONNX Runtime: the shapes of
 * the graph's weight tables, so a model.json whose sizes disagree with the graph (another model's
 * model.json, a hand edit) is refused at load (BAD_MODEL naming both numbers) instead of failing
 * later with ONNX Runtime's own error (and its stderr output): the position table's rows against
 * max_length and max_position_embeddings, table widths against hidden_size, the word table and the
 * output bias against vocab_size, the layer count against num_hidden_layers (load.ts compares).
 *
 * A minimal protobuf walk: ModelProto.graph (field 7) → GraphProto.initializer (field 5, repeated
 * TensorProto) → TensorProto.dims (field 1, int64, packed or not) and name (field 8). Every other
 * field, the weights included, is skipped by its length, so this costs microseconds for a model of
 * megabytes. Anything unexpected means "unknown": the check is skipped (ONNX Runtime then judges
 * the file).
 */
import { TiankongError } from '../errors.js';
import type { ModelManifest } from '../types.js';

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

/**
 * Every initializer of the graph as name → dims, in file order; null when the bytes are not a
 * readable ModelProto (ONNX Runtime then gives its own error).
 */
export function graphInitializers(modelBytes: Uint8Array): Map<string, number[]> | null {
  const found = new Map<string, number[]>();
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
        if (!found.has(name)) found.set(name, dims);
      }
    }
  } catch (error) {
    if (error instanceof Malformed) return null;
    throw error;
  }
  return found;
}

/** A weight table of the graph: [rows, width]. */
export interface GraphTable {
  /** The initializer's name (messages show it). */
  name: string;
  rows: number;
  width: number;
}

/** What model.onnx's initializers show of the architecture; a field is absent where the graph does not show it. */
export interface GraphShapes {
  /** The position table: one row per position, hidden_size wide. */
  positions?: GraphTable;
  /** The word-embedding table of a mask-only graph (a core graph has it in head.bin): one row per token. */
  words?: GraphTable;
  /** The MLM output bias of a mask-only graph: one entry per token. */
  outputBias?: { name: string; size: number };
  /** Transformer layers, from initializer names "…layer.N.…" when the Ns run 0 … L−1 without a gap. */
  layers?: number;
}

/** The position-embedding initializer of a BERT export (…embeddings.position_embeddings.weight[.fp16]). */
const POSITION_TABLE = /position_embeddings/;
/**
 * The word-embedding table, [V, H] (…word_embeddings.weight, with .int8 or .fp16 when stored
 * quantized): not its per-row or per-column scales, nor a transposed copy (…weight_t, [H, V]).
 */
const WORD_TABLE = /word_embeddings\.weight(\.int8|\.fp16)?$/;
/** The tied decoder's bias (cls.predictions.bias, or …predictions.decoder.bias). */
const OUTPUT_BIAS = /predictions(\.decoder)?\.bias$/;
/** A transformer layer's weights: bert.encoder.layer.N.… */
const LAYER = /(?:^|\.)layer\.(\d+)\./;

/** The shapes model.onnx shows (see GraphShapes), or null when the bytes are not a readable model. */
export function graphShapes(modelBytes: Uint8Array): GraphShapes | null {
  const initializers = graphInitializers(modelBytes);
  if (initializers === null) return null;
  const shapes: GraphShapes = {};
  const layers = new Set<number>();
  const table = (name: string, dims: number[]): GraphTable | undefined =>
    dims.length === 2 && dims[0]! > 0 && dims[1]! > 1 ? { name, rows: dims[0]!, width: dims[1]! } : undefined;
  for (const [name, dims] of initializers) {
    if (!shapes.positions && POSITION_TABLE.test(name)) shapes.positions = table(name, dims);
    else if (!shapes.words && WORD_TABLE.test(name)) shapes.words = table(name, dims);
    else if (!shapes.outputBias && OUTPUT_BIAS.test(name) && dims.length === 1 && dims[0]! > 0) {
      shapes.outputBias = { name, size: dims[0]! };
    }
    const layer = LAYER.exec(name);
    if (layer) layers.add(Number(layer[1]));
  }
  // Layer indices with a gap (or not from 0) are some other naming: the count is not shown.
  if (layers.size > 0 && Math.max(...layers) === layers.size - 1) shapes.layers = layers.size;
  return shapes;
}

/**
 * The longest input the graph will be given and the model.json field that sets it: max_length,
 * or the window threshold (or whole_up_to) when model.json reads long inputs through windows.
 */
export function longestInput(manifest: ModelManifest): { length: number; field: string } {
  const window = manifest.window;
  const longest = Math.min(
    manifest.max_length,
    window ? Math.max(window.threshold, window.whole_up_to ?? 0) : Infinity,
  );
  const field =
    longest === manifest.max_length
      ? `max_length ${manifest.max_length}`
      : longest === window?.threshold
        ? `window.threshold ${longest}`
        : `window.whole_up_to ${longest}`;
  return { length: longest, field };
}

/**
 * Throws BAD_MODEL when the longest input the graph will be given (longestInput) is longer than
 * the graph's position-embedding table. Graphs without a recognisable table are not checked.
 */
export function checkPositionTable(modelBytes: Uint8Array, manifest: ModelManifest, where: string): void {
  const positions = graphShapes(modelBytes)?.positions?.rows;
  if (positions === undefined) return;
  const { length, field } = longestInput(manifest);
  if (length > positions) {
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: ${where}: model.json's ${field} is longer than model.onnx can read ` +
        `(its position table has ${positions} positions); set max_length to at most ${positions} (scripts/export-model writes it)`,
    );
  }
}
