/**
 * The one error type of the tiankong API. `code` is stable (switch on it); `message`
 * says what went wrong and what to do about it.
 *
 * @example
 * ```ts
 * try {
 *   await tk.fill('没有掩码的句子');
 * } catch (error) {
 *   if (error instanceof TiankongError && error.code === 'NO_MASK') console.log(error.message);
 * }
 * ```
 */
export type TiankongErrorCode =
  /** The text is empty or only whitespace. */
  | 'EMPTY_INPUT'
  /** The text contains no [MASK]. */
  | 'NO_MASK'
  /** The text has more tokens than the model accepts (nothing is truncated silently). */
  | 'TOO_LONG'
  /**
   * Something written in the text cannot be met: a blank's constraint (`[MASK:shangg]`, a tone
   * that does not exist, a sound no character of the vocabulary has). The message names the blank.
   */
  | 'BAD_INPUT'
  /** An option has the wrong type or range (e.g. `topK: 0`, a filter token not in the vocabulary). */
  | 'BAD_OPTION'
  /** The model files are missing, malformed, or do not match their manifest. */
  | 'BAD_MODEL'
  /** A downloaded or read file does not have the sha256 its manifest declares. */
  | 'INTEGRITY'
  /** A download failed (network error or HTTP error status). */
  | 'NETWORK'
  /** The instance was disposed. */
  | 'DISPOSED'
  /** This environment lacks something tiankong needs (Worker, WebAssembly, a local path in a browser). */
  | 'UNSUPPORTED'
  /** The request was cancelled through its AbortSignal (also a superseded request). */
  | 'ABORTED';

/** Every failure of the tiankong API: `code` says which kind, `message` what to do. */
export class TiankongError extends Error {
  override readonly name = 'TiankongError';
  /** Index into the `texts` of `fillBatch` when one text of a batch is at fault. */
  index?: number;

  constructor(
    readonly code: TiankongErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The plain-object form that crosses the Worker boundary (Error subclasses do not survive structured clone). */
export interface SerializedError {
  code: TiankongErrorCode;
  message: string;
  index?: number;
}

/** Any thrown value → its form for postMessage (unknown failures become BAD_MODEL with their text). */
export function serializeError(error: unknown): SerializedError {
  if (error instanceof TiankongError) {
    return { code: error.code, message: error.message, ...(error.index === undefined ? {} : { index: error.index }) };
  }
  // Anything else is a bug or a runtime failure we did not classify; keep its text.
  return { code: 'BAD_MODEL', message: `tiankong: unexpected failure: ${describe(error)}` };
}

/** The TiankongError a serialized error describes (the Worker's errors on the page's side). */
export function deserializeError(error: SerializedError): TiankongError {
  const result = new TiankongError(error.code, error.message);
  if (error.index !== undefined) result.index = error.index;
  return result;
}

/** A readable one-line description of any thrown value. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The ABORTED error for a cancelled request, naming the signal's reason. */
export function abortError(signal?: AbortSignal): TiankongError {
  const reason = signal?.reason;
  const why = reason instanceof Error ? `: ${reason.message}` : typeof reason === 'string' ? `: ${reason}` : '';
  return new TiankongError('ABORTED', `tiankong: the request was cancelled${why}`);
}

/** Throws ABORTED when `signal` has been aborted. */
export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortError(signal);
}
