// The native bound: the same mask-only INT8 model in onnxruntime-node (model/tooling/ort-session.mjs),
// fed by Hugging Face's native tokenizer (npm `tokenizers`), with a plain softmax + top-k per
// mask, i.e. the same work tiankong does per fill, minus WebAssembly. One session per thread
// count; onnxruntime-node sets threads per session, so both live in this process.
import { join } from 'node:path';
import tokenizers from 'tokenizers';
import { softmaxTopK } from '../../model/tooling/logits.mjs';
import { createSession, runLogits } from '../../model/tooling/ort-session.mjs';

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
        input_ids: [ids],
        attention_mask: [ids.map(() => 1)],
        token_type_ids: [ids.map(() => 0)],
        mask_positions: [positions],
      });
      const vocab = dims[2];
      const rows = positions.map((_, m) => softmaxTopK(data.subarray(m * vocab, (m + 1) * vocab), k));
      return { filled: rows.length, top1: tokenizer.idToToken(rows[0][0].id) };
    },
  };
}
