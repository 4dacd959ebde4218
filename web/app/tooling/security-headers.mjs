/**
 * The HTTP headers every tiankong app response carries, in one place: the static server
 * (scripts/serve.mjs) sends them, the service worker re-adds the isolation headers to what
 * it serves, and the page repeats the CSP in a <meta> for hosts that send no headers.
 */

/**
 * Content-Security-Policy: only what the app needs.
 * - 'wasm-unsafe-eval': compiling WebAssembly (core + ONNX Runtime) is blocked without it.
 * - worker-src 'self': the runtime's module Worker and the Emscripten pthread workers are
 *   same-origin files; no blob: workers.
 * Everything else stays at 'self' or 'none'.
 */
const CSP_DIRECTIVES = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
];
export const CONTENT_SECURITY_POLICY = CSP_DIRECTIVES.join('; ');

/** The same policy for a <meta http-equiv> tag, which must not carry frame-ancestors (browsers warn). */
export const CONTENT_SECURITY_POLICY_META = CSP_DIRECTIVES.filter((d) => !d.startsWith('frame-ancestors')).join('; ');

/**
 * Cross-origin isolation (SharedArrayBuffer, so wasm threads) needs COOP + COEP on the
 * document and workers; CORP lets our own resources load under require-corp.
 */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** Headers for every response of the static server. */
export const SECURITY_HEADERS = {
  ...ISOLATION_HEADERS,
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};
