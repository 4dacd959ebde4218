// Prepended (--extern-pre-js) to the ES-module output of Emscripten 3.1.6, outside the
// module factory. Under Node the generated code expects CommonJS `require`/`__dirname`
// and would try Node's global `fetch` on a file path: shadow all three with
// module-scoped bindings. In browsers and workers nothing changes.
var require,
  __dirname,
  fetch = globalThis.fetch;
if (typeof process === 'object' && process.versions && process.versions.node) {
  require = process.getBuiltinModule('module').createRequire(import.meta.url);
  __dirname = require('path').dirname(require('url').fileURLToPath(import.meta.url));
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- read by the generated code that follows
  fetch = undefined;
}
