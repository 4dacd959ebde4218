// The native bound: the same mask-only INT8 model in onnxruntime-node (model/tooling/ort-session.mjs),
// fed by Hugging Face's native tokenizer (npm `tokenizers`), with a plain softmax + top-k per
// mask, i.e. the same work tiankong does per fill, minus WebAssembly. One session per thread
// count; onnxruntime-node sets threads per session, so both live in this process.
import { join } from 'node:path';
import tokenizers from 'tokenizers';
import { createSession, runLogits } from '../../model/tooling/ort-session.mjs';

/** Indices of the k largest probabilities of one logits row (softmax over the row). */
function topK(logits, offset, size, k) {
  let max = -Infinity;
  for (let i = 0; i < size; i++) max = Math.max(max, logits[offset + i]);
  let sum = 0;
  for (let i = 0; i < size; i++) sum += Math.exp(logits[offset + i] - max);
  const best = [];
  for (let i = 0; i < size; i++) {
    const v = logits[offset + i];
    if (best.length < k || v > best[best.length - 1].v) {
      best.push({ id: i, v });
      best.sort((a, b) => b.v - a.v);
      if (best.length > k) best.pop();
    }
  }
  return best.map(({ id, v }) => ({ id, p: Math.exp(v - max) / sum }));
}

/**
 * @param {{modelDir: string, tokenizerJson: string, threads: number, topK: number}} options
 * @returns {Promise<{fill(text: string): Promise<{filled: number, top1: string}>}>}
 */
export async function createNativeFillMask({ modelDir, tokenizerJson, threads, topK: k }) {
  const tokenizer = tokenizers.Tokenizer.fromFile(tokenizerJson);
  const handle = await createSession(join(modelDir, 'model.onnx'), 'node', threads);
  const maskId = tokenizer.tokenToId('[MASK]');
  return {
    async fill(text) {
      const ids = (await tokenizer.encode(text)).getIds();
      const positions = ids.flatMap((id, i) => (id === maskId ? [i] : []));
      const { dims, data } = await runLogits(handle, {
        input_ids: [ids], attention_mask: [ids.map(() => 1)], token_type_ids: [ids.map(() => 0)], mask_positions: [positions],
      });
      const vocab = dims[2];
      const rows = positions.map((_, m) => topK(data, m * vocab, vocab, k));
      return { filled: rows.length, top1: tokenizer.idToToken(rows[0][0].id) };
    },
  };
}
