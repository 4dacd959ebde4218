/**
 * tiankong (填空): Chinese fill-in-the-blank with a BERT masked-language model, in Node and
 * in browsers. This is the Node entry (the model runs in-process); bundlers pick the browser
 * entry (`tiankong/browser`, same API, the model runs in a Worker) through the "browser"
 * export condition.
 *
 * @example
 * ```ts
 * import { createFillMask } from 'tiankong';
 * const tk = await createFillMask({ model: './model/default' });
 * const { masks } = await tk.fill('春眠不觉晓，处处闻啼[MASK]。', { topK: 3 });
 * for (const c of masks[0].candidates) console.log(c.token, c.score.toFixed(3), c.sequence);
 * await tk.dispose();
 * ```
 * @packageDocumentation
 */
import { openNodeEngine } from './node.js';
import type { CreateFillMaskOptions, FillMaskModel } from './types.js';

export { TiankongError } from './errors.js';
export type * from './types.js';
export { createTokenizer, type Tokenized, type TokenizerHandle, type TokenizerSettings } from './tokenize.js';
export { DEFAULT_MODEL_DIR } from './node.js';

/**
 * Loads a model and returns a {@link FillMaskModel}. Rejects with a {@link TiankongError}
 * (BAD_MODEL, INTEGRITY, NETWORK, BAD_OPTION, ABORTED) that says what to fix.
 *
 * @example
 * ```ts
 * const tk = await createFillMask({ model: 'model/default', threads: 2, onProgress: (p) => console.log(p.file, p.loaded) });
 * console.log(tk.stats().backend); // 'native' with onnxruntime-node installed, else 'wasm'
 * ```
 */
export async function createFillMask(options: CreateFillMaskOptions = {}): Promise<FillMaskModel> {
  const { engine } = await openNodeEngine(options);
  return {
    fill: (text, fillOptions) => engine.fill(text, fillOptions),
    fillBatch: (texts, fillOptions) => engine.fillBatch(texts, fillOptions),
    explain: (text, maskIndex, token, explainOptions) => engine.explain(text, maskIndex, token, explainOptions),
    stats: () => engine.stats(),
    dispose: () => engine.dispose(),
  };
}
