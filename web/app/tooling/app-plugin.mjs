/**
 * Vite plugin that turns the page into the installable, offline app:
 * - copies the runtime package (repo dist/) verbatim to `tiankong/` and the model directory to
 *   `models/default/`, so Vite never rewrites the Emscripten/ONNX Runtime worker and wasm URLs;
 * - emits the icons (drawn in tooling/icons.mjs), the web app manifest and the idiom dictionary
 *   (the committed, generated web/app/data/idioms.json);
 * - writes the CSP into index.html;
 * - builds the service worker (src/sw/sw.ts) with the precache list of everything above and a
 *   version derived from the content of every precached file; the idiom dictionary is listed as
 *   lazy (cached when the page first asks for it, not downloaded at install);
 * - writes FILE.br and FILE.gz beside every compressible file (tooling/precompress.mjs), which
 *   scripts/serve.mjs sends to browsers that accept them.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { ICONS, renderIcon } from './icons.mjs';
import { vendorBareImports } from './vendor-imports.mjs';
import { COMMITTED_IDIOMS_JSON } from './idioms.mjs';
import { precompressDir } from './precompress.mjs';
import { CONTENT_SECURITY_POLICY_META, ISOLATION_HEADERS } from './security-headers.mjs';

const APP_DIR = fileURLToPath(new URL('..', import.meta.url));
const REPO = path.resolve(APP_DIR, '../..');

export const RUNTIME_DIR = 'tiankong';
export const MODEL_DIR = 'models/default';

/** Files of the runtime package the browser never loads. */
const RUNTIME_SKIP = /\.(map|d\.ts)$/;
/** The package's Node entry and Node-only modules: copied as they are, never loaded by the page. */
const NODE_ONLY = /^(index|cli|node|tokenize)\.js$/;
/** Emscripten and ONNX Runtime output inside the package (and vendored copies): loaded by URL, never rewritten. */
const GENERATED = /^(core\/wasm|ort|vendor)\//;
/**
 * Package files the page never loads: the Node-only modules and the pthread build of the core
 * (the runtime always runs the single-threaded core; ONNX Runtime owns the inference threads).
 */
const NEVER_LOADED = new RegExp(
  `^${RUNTIME_DIR}/(${NODE_ONLY.source.slice(1, -1)}|core/wasm/tiankong-core-threads\\.[a-z.]+)$`,
);
/** Output files that are not precached: the worker itself, precompressed variants and what the page never loads. */
const isPrecached = (url) => url !== 'sw.js' && !/\.(br|gz)$/.test(url) && !NEVER_LOADED.test(url);
/** Precached only when the page first fetches them (big, and not needed for a first answer). */
const LAZY = new Set(['idioms.json']);
/** Where compressed results are kept between builds (content-addressed). */
const PRECOMPRESS_CACHE = path.join(REPO, '.cache', 'precompressed');

function fail(message) {
  throw new Error(`tiankong app build: ${message}`);
}

/** Checks the inputs early so a missing model or runtime stops the build with a clear message. */
function resolveInputs(options) {
  const runtimeDir = path.resolve(options.runtimeDir ?? process.env.TIANKONG_RUNTIME_DIR ?? path.join(REPO, 'dist'));
  const modelDir = path.resolve(options.modelDir ?? process.env.TIANKONG_MODEL_DIR ?? path.join(REPO, 'model/default'));
  const entry = ['browser.js', 'index.js'].find((f) => existsSync(path.join(runtimeDir, f)));
  if (!entry)
    fail(
      `${runtimeDir} has no browser.js or index.js: build the runtime first (npx tsc -p web/tsconfig.json, or bash scripts/build)`,
    );
  if (!existsSync(path.join(modelDir, 'model.json'))) {
    fail(
      `${modelDir} has no model.json. Train and export the default model (scripts/train-default-model), ` +
        'or set TIANKONG_MODEL_DIR to an exported model directory (scripts/make-test-model OUT makes a tiny one in OUT/mask-only)',
    );
  }
  const manifest = JSON.parse(readFileSync(path.join(modelDir, 'model.json'), 'utf8'));
  for (const file of Object.keys(manifest.files ?? {})) {
    if (!existsSync(path.join(modelDir, file))) fail(`${modelDir}/model.json lists ${file}, which is missing`);
  }
  return { runtimeDir, modelDir, entry, manifest };
}

function listFiles(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const full = path.join(dir, d.name);
    return d.isDirectory() ? listFiles(full, base) : [path.relative(base, full).split(path.sep).join('/')];
  });
}

/** Static relative imports, as tsc writes them (one statement a line). */
const STATIC_IMPORT =
  /^(?:import|export)\b[^;'"]*?\bfrom\s*(['"])(\.{1,2}\/[^'"\n]+)\1|^import\s*(['"])(\.{1,2}\/[^'"\n]+)\3/gm;

/** `entry` and every module it imports statically (relative imports), paths relative to `dir`. */
export function runtimeGraph(dir, entry) {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file) || !existsSync(path.join(dir, file))) return;
    seen.add(file);
    for (const match of readFileSync(path.join(dir, file), 'utf8').matchAll(STATIC_IMPORT)) {
      visit(path.posix.normalize(path.posix.join(path.posix.dirname(file), match[2] ?? match[4])));
    }
  };
  visit(entry);
  return [...seen];
}

function sha256(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The precache list of the finished output directory: app files get a content revision (`lazy`
 * ones are cached on first use), the model's big files are listed with the sha256 of model.json
 * (the runtime keeps them in its own content-addressed cache). The version hashes every URL and
 * revision.
 */
export function precacheManifest(outDir, modelManifest) {
  const modelFiles = new Set(Object.keys(modelManifest.files).map((f) => `${MODEL_DIR}/${f}`));
  const app = [];
  const lazy = [];
  const model = [];
  for (const url of listFiles(outDir).sort()) {
    if (!isPrecached(url)) continue;
    const bytes = readFileSync(path.join(outDir, url));
    if (modelFiles.has(url)) {
      const { sha256: digest, bytes: size } = modelManifest.files[url.slice(MODEL_DIR.length + 1)];
      if (size !== bytes.length) fail(`${url} has ${bytes.length} bytes, model.json says ${size}`);
      model.push({ url, sha256: digest, bytes: size });
    } else {
      (LAZY.has(url) ? lazy : app).push({ url, revision: sha256(bytes).slice(0, 16), bytes: bytes.length });
    }
  }
  const version = sha256(
    [...app, ...lazy]
      .map((e) => `${e.url} ${e.revision}`)
      .concat(model.map((e) => `${e.url} ${e.sha256}`))
      .join('\n'),
  ).slice(0, 12);
  return { version, app, lazy, model };
}

function webManifest() {
  return {
    name: '填空 · 中文 AI 填字',
    short_name: '填空',
    description: '在浏览器里用 BERT 预测句子中 [MASK] 处的字，离线可用。',
    lang: 'zh-CN',
    start_url: './',
    scope: './',
    display: 'standalone',
    background_color: '#f6f7fb',
    theme_color: '#4f46e5',
    icons: [
      { src: 'icons/icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
      { src: 'icons/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any' },
      { src: 'icons/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
    ],
  };
}

/** The plugin. Options: { modelDir, runtimeDir, idiomsJson } (defaults: env vars, then the repo's). */
export function tiankongApp(options = {}) {
  let inputs;
  let outDir;
  return {
    name: 'tiankong-app',
    apply: 'build',
    config() {
      inputs = resolveInputs(options);
      return { define: { __TIANKONG_RUNTIME_ENTRY__: JSON.stringify(`${RUNTIME_DIR}/${inputs.entry}`) } };
    },
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    transformIndexHtml(html) {
      // The runtime's main-thread modules, fetched in parallel with the page instead of one import level at a time.
      const preload = runtimeGraph(inputs.runtimeDir, inputs.entry)
        .map((file) => `<link rel="modulepreload" href="./${RUNTIME_DIR}/${file}" />`)
        .join('\n    ');
      return html
        .replace('__TIANKONG_CSP__', CONTENT_SECURITY_POLICY_META)
        .replace('</head>', `    ${preload}\n  </head>`);
    },
    generateBundle() {
      for (const [name, { size, maskable }] of Object.entries(ICONS)) {
        this.emitFile({ type: 'asset', fileName: `icons/${name}`, source: renderIcon(size, { maskable }) });
      }
      this.emitFile({
        type: 'asset',
        fileName: 'manifest.webmanifest',
        source: JSON.stringify(webManifest(), null, 2),
      });
      this.emitFile({
        type: 'asset',
        fileName: 'idioms.json',
        source: readFileSync(options.idiomsJson ?? COMMITTED_IDIOMS_JSON),
      });
    },
    async closeBundle() {
      const { runtimeDir, modelDir, manifest } = inputs;
      const runtimeOut = path.join(outDir, RUNTIME_DIR);
      cpSync(runtimeDir, runtimeOut, { recursive: true, filter: (src) => !RUNTIME_SKIP.test(src) });
      // The package's own modules: its top level and folders, without the generated glue.
      const browserModules = listFiles(runtimeOut).filter(
        (f) => /\.m?js$/.test(f) && !GENERATED.test(f) && !NODE_ONLY.test(f),
      );
      vendorBareImports(
        runtimeOut,
        browserModules.map((f) => path.join(runtimeOut, f)),
        REPO,
      );
      for (const file of ['model.json', ...Object.keys(manifest.files)]) {
        cpSync(path.join(modelDir, file), path.join(outDir, MODEL_DIR, file));
      }
      const precache = precacheManifest(outDir, manifest);
      await build({
        configFile: false,
        logLevel: 'warn',
        root: APP_DIR,
        define: {
          __PRECACHE__: JSON.stringify(precache),
          __ISOLATION_HEADERS__: JSON.stringify(ISOLATION_HEADERS),
        },
        build: {
          outDir,
          emptyOutDir: false,
          target: 'es2022',
          minify: true,
          lib: {
            entry: path.join(APP_DIR, 'src/sw/sw.ts'),
            formats: ['iife'],
            name: 'tiankongServiceWorker',
            fileName: () => 'sw.js',
          },
        },
      });
      const compressed = await precompressDir(outDir, { cacheDir: PRECOMPRESS_CACHE });
      const appBytes = precache.app.reduce((s, e) => s + e.bytes, 0);
      const modelBytes = precache.model.reduce((s, e) => s + e.bytes, 0);
      console.log(
        `tiankong app: version ${precache.version}; precache ${precache.app.length} app files ` +
          `(${(appBytes / 1e6).toFixed(1)} MB) + model "${manifest.name}" (${(modelBytes / 1e6).toFixed(1)} MB from ${modelDir}); ` +
          `${compressed.files} files precompressed: ${(compressed.bytes / 1e6).toFixed(1)} MB -> ${(compressed.br / 1e6).toFixed(1)} MB brotli`,
      );
    },
  };
}
