/**
 * The runtime package (dist/) imports its dependencies by bare specifier
 * (`import * as ort from 'onnxruntime-web/wasm'`), which only a bundler or an import map can
 * resolve — and import maps do not reach module Workers. Since the app copies the package
 * verbatim instead of bundling it, this step resolves each bare import once at build time:
 * the dependency's file is copied to `vendor/` next to the package and the specifier becomes
 * a relative URL. Nothing else in the files changes.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Export conditions in order of preference: what a bundler targeting browsers picks (for
 * 'onnxruntime-web/wasm': ORT's bundle, glue included, which names its wasm by a literal
 * `new URL('ort-wasm-simd-threaded.wasm', import.meta.url)`; the file is vendored beside it).
 */
const CONDITIONS = ['browser', 'import', 'default'];

/** `new URL('file', import.meta.url)` with a relative literal: the files a module fetches beside itself. */
const SIBLING_URL = /new\s+URL\(\s*(['"])(\.?\/?[\w.-]+)\1\s*,\s*import\.meta\.url\s*\)/g;

// Top-level `import … from 'x'`, `export … from 'x'` and `import 'x'` statements, which tsc
// writes at the start of a line (so examples in doc comments never match).
const IMPORT_PATTERN = /^((?:import|export)\b[^;'"]*?\bfrom\s*|import\s*)(['"])([^'"\n]+)\2/gm;

function isBare(specifier) {
  return !/^(\.{0,2}\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);
}

function pickTarget(target) {
  if (typeof target === 'string') return target;
  if (target && typeof target === 'object') {
    for (const condition of CONDITIONS) {
      const picked = condition in target ? pickTarget(target[condition]) : null;
      if (picked) return picked;
    }
  }
  return null;
}

/** node_modules/<name>/package.json in `fromDir` or the nearest folder above it that has one. */
function findPackageJson(name, fromDir) {
  for (let dir = path.resolve(fromDir); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name, 'package.json');
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir)
      throw new Error(`cannot find the package "${name}" (npm install it) from ${fromDir}`);
  }
}

/** Resolves a bare specifier to a file through the package's "exports", for the browser. */
export function resolveForBrowser(specifier, fromDir) {
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  const subpath = `.${specifier.slice(name.length)}`;
  const packageJson = findPackageJson(name, fromDir);
  const { exports } = JSON.parse(readFileSync(packageJson, 'utf8'));
  const target = pickTarget(exports?.[subpath] ?? (subpath === '.' ? exports : undefined));
  if (!target) throw new Error(`cannot resolve "${specifier}" for the browser: ${packageJson} exports no "${subpath}"`);
  return path.join(path.dirname(packageJson), target);
}

/**
 * Rewrites the bare imports of `files` (paths under `packageDir`) to vendored copies in
 * `packageDir/vendor/`. Specifiers starting with `node:` are left alone (Node-only files).
 * Returns the vendored files as { specifier: relative path }.
 */
export function vendorBareImports(packageDir, files, resolveFrom) {
  const vendored = {};
  for (const file of files) {
    const source = readFileSync(file, 'utf8');
    const rewritten = source.replace(IMPORT_PATTERN, (whole, lead, quote, specifier) => {
      if (!isBare(specifier) || specifier.startsWith('node:')) return whole;
      if (!vendored[specifier]) {
        const resolved = resolveForBrowser(specifier, resolveFrom);
        const target = path.join(packageDir, 'vendor', specifier.replaceAll('/', '__') + path.extname(resolved));
        mkdirSync(path.dirname(target), { recursive: true });
        copyFileSync(resolved, target);
        // The files it fetches beside itself come along (ORT's wasm).
        for (const [, , sibling] of readFileSync(resolved, 'utf8').matchAll(SIBLING_URL)) {
          const from = path.join(path.dirname(resolved), sibling);
          if (existsSync(from)) copyFileSync(from, path.join(path.dirname(target), path.basename(sibling)));
        }
        vendored[specifier] = path.relative(packageDir, target).split(path.sep).join('/');
      }
      let relative = path
        .relative(path.dirname(file), path.join(packageDir, vendored[specifier]))
        .split(path.sep)
        .join('/');
      if (!relative.startsWith('.')) relative = `./${relative}`;
      return `${lead}${quote}${relative}${quote}`;
    });
    if (rewritten !== source) writeFileSync(file, rewritten);
  }
  return vendored;
}
