/**
 * Text helpers shared by every caller of the core's tokenizer.
 *
 * Lone UTF-16 surrogates have no UTF-8 form. The core's `Tokenizer.encode` replaces them itself
 * (wasm/bindings/embind.cc: its guarantee that no string crashes it), but the runtime also needs
 * the replaced text on this side: `FillResult.text`, every `sequence` and the explained tokens'
 * offsets refer to it. So the runtime replaces them once here, before encoding; the binding's pass
 * over an already well-formed string is a cheap no-op kept as the core's own safety net (it also
 * protects direct users of core/load-core.js).
 */

/**
 * Replaces lone surrogates with U+FFFD (one UTF-16 unit too, so offsets into the result index the
 * original string as well). Uses String.prototype.toWellFormed where it exists.
 *
 * @example
 * ```ts
 * toWellFormed('a\uD800b'); // 'a\uFFFDb'
 * ```
 */
export function toWellFormed(text: string): string {
  const native = (text as { toWellFormed?: () => string }).toWellFormed;
  if (native) return native.call(text);
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}
