/**
 * Node only: the pieces the Node entry's worker thread (node-worker.ts, started by index.ts) puts
 * together — the inference runtime (onnxruntime-node or onnxruntime-web), models from local
 * directories, URLs or bytes, and the engine built from them (openNodeEngine).
 *
 * Runtime choice, measured with tests/runtime/bench-node-backends.mjs
 * (bench/results/node-backends.json): onnxruntime-node (native CPU) runs the INT8 model 2.5–3×
 * faster than onnxruntime-web's wasm build at equal threads on a bert-base-size model, loads no
 * 14 MB wasm, and lets the process exit at once (V8 keeps compiling ORT's wasm in the background
 * for seconds). So 'auto' uses it when installed (optional peer dependency) and falls back to
 * onnxruntime-web, which is always installed.
 */
import { readFile, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngineCore } from './core/engine-core.js';
import type { LoadedCore } from './core/load-core.js';
import { FillMaskEngine } from './engine/engine.js';
import { type CreateSettings, checkCreateOptions, checkModelSource, resolveThreads } from './engine/options.js';
import type { InferenceRuntime, OrtModule, OrtSession } from './engine/session.js';
import { TiankongError, describe } from './errors.js';
import { isModelBytes, loadModelFromBytes } from './model/bytes.js';
import { type LoadModelOptions, type LoadedModel, loadModel } from './model/load.js';
import { MANIFEST_FILE, parseManifest } from './model/manifest.js';
import { loadModelFromUrl } from './model/url.js';
import type { CreateFillMaskOptions, ModelSource } from './types.js';

/** The model shipped with the package (model/default/ at the package root), if installed. */
export const DEFAULT_MODEL_DIR = fileURLToPath(new URL('../model/default/', import.meta.url));

/**
 * The steps of the Node entry's createFillMask: check the options, pick the runtime, load the
 * model, load the core, build the engine. With `onPreview` and a split memory, a preview engine
 * (FillMaskEngine.preview) is handed over once the memory's first part is read, before the
 * model's files. Returns the core too (for tools that measure its heap).
 * Rejects with a TiankongError; nothing stays loaded when it does.
 */
export async function openNodeEngine(
  options: Omit<CreateFillMaskOptions, 'onPreview'>,
  guard?: RunGuard,
  onPreview?: (preview: FillMaskEngine) => void,
): Promise<{ engine: FillMaskEngine; core: LoadedCore }> {
  const settings = checkCreateOptions(options);
  const created = await createNodeRuntime(settings);
  const runtime = guard ? guardedRuntime(created, guard) : created;
  const corePromise = loadEngineCore();
  corePromise.catch(() => undefined); // its failure is reported below, after the model's
  const model = await loadModelInNode(options.model, {
    onProgress: options.onProgress,
    signal: options.signal,
    memory: settings.memory,
    ...(onPreview && settings.memory
      ? { onMemoryFirst: FillMaskEngine.previewHook(corePromise, { runtime, cache: settings.cache }, onPreview) }
      : {}),
  });
  const core = await corePromise;
  try {
    return { engine: await FillMaskEngine.create({ model, core, runtime, cache: settings.cache }), core };
  } catch (error) {
    core.dispose();
    throw error;
  }
}

/** Runs `work` (a call into ONNX Runtime) inside whatever the caller needs around it (node-worker.ts). */
export type RunGuard = <T>(work: () => Promise<T>) => Promise<T>;

/** `runtime` with every session create, run and release passed through `guard`. */
function guardedRuntime(runtime: InferenceRuntime, guard: RunGuard): InferenceRuntime {
  const { ort } = runtime;
  const wrap = (session: OrtSession): OrtSession => ({
    get inputNames() {
      return session.inputNames;
    },
    get outputNames() {
      return session.outputNames;
    },
    run: (feeds) => guard(() => session.run(feeds)),
    release: () => guard(() => session.release()),
  });
  return {
    ...runtime,
    ort: {
      Tensor: ort.Tensor,
      InferenceSession: {
        create: async (model, options) => wrap(await guard(() => ort.InferenceSession.create(model, options))),
      },
    },
  };
}

/** onnxruntime-web's wasm thread count is per process, fixed when its first session starts. */
let webThreadsInProcess: number | undefined;

/** The inference runtime for checked options (options.ts: checkCreateOptions). */
export async function createNodeRuntime({
  backend,
  threads,
}: Pick<CreateSettings, 'backend' | 'threads'>): Promise<InferenceRuntime> {
  const cores = availableParallelism();
  const { count, reason: threadsReason } = resolveThreads(threads, cores);
  if (backend === 'auto') {
    const native = await import('onnxruntime-node').catch(() => null);
    if (native) {
      return {
        ort: native as unknown as OrtModule,
        backend: 'native',
        threads: count,
        threadsReason,
        backendReason: 'onnxruntime-node is installed (native CPU, faster than wasm in Node)',
        sessionOptions: {
          executionProviders: ['cpu'],
          graphOptimizationLevel: 'all',
          intraOpNumThreads: count,
          interOpNumThreads: 1,
        },
      };
    }
  }
  const backendReason =
    backend === 'wasm'
      ? 'requested'
      : backend === 'webgpu'
        ? 'WebGPU is not available in Node.js: using onnxruntime-web (wasm)'
        : 'onnxruntime-node is not installed (npm install onnxruntime-node for faster inference): using onnxruntime-web (wasm)';
  // The package's "node" export of onnxruntime-web: its wasm backend set up for Node.
  const web = await import('onnxruntime-web');
  webThreadsInProcess ??= web.env.wasm.numThreads = count;
  return {
    ort: web as unknown as OrtModule,
    backend: 'wasm',
    backendReason,
    threads: webThreadsInProcess,
    threadsReason:
      webThreadsInProcess === count
        ? threadsReason
        : `onnxruntime-web's thread count is per process and was fixed at ${webThreadsInProcess} by the first model`,
    sessionOptions: { executionProviders: ['wasm'], graphOptimizationLevel: 'all' },
  };
}

/**
 * Loads a model from any source Node supports: a directory, a file:, http: or https: URL, or
 * bytes; `undefined` means the packaged default model. Throws UNSUPPORTED for other URL schemes.
 */
export async function loadModelInNode(
  source: ModelSource | undefined,
  options: LoadModelOptions,
): Promise<LoadedModel> {
  checkModelSource(source);
  if (source === undefined) {
    if (!(await isDirectory(DEFAULT_MODEL_DIR))) {
      throw new TiankongError(
        'BAD_MODEL',
        `tiankong: no model given and the default model is not installed at ` +
          `${DEFAULT_MODEL_DIR}; pass the model directory (createFillMask({ model: DIR }), CLI: --model DIR)`,
      );
    }
    return loadModelDirectory(DEFAULT_MODEL_DIR, options);
  }
  if (isModelBytes(source)) return loadModelFromBytes(source, options);
  const url = source instanceof URL ? source : /^[a-z][a-z\d+.-]+:\/\//i.test(source) ? new URL(source) : null;
  if (url === null) return loadModelDirectory(resolve(source as string), options);
  if (url.protocol === 'file:') return loadModelDirectory(fileURLToPath(url), options);
  if (url.protocol === 'http:' || url.protocol === 'https:') return loadModelFromUrl(url, options);
  throw new TiankongError(
    'UNSUPPORTED',
    `tiankong: cannot load a model from ${url.href}: use a directory, a file:, http: or https: URL`,
  );
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** Reads DIR/model.json and the files it lists (model/load.ts verifies each against its size and sha256). */
export async function loadModelDirectory(dir: string, options: LoadModelOptions = {}): Promise<LoadedModel> {
  const found = await stat(dir).catch(() => null);
  if (found === null) {
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: model directory ${dir} does not exist; pass the folder written by scripts/export-model`,
    );
  }
  if (!found.isDirectory()) {
    const hint =
      basename(dir) === MANIFEST_FILE || /\.(onnx|txt|bin)$/.test(dir)
        ? `; pass the folder that holds it: ${dirname(dir)}`
        : '; pass the folder written by scripts/export-model';
    throw new TiankongError(
      'BAD_MODEL',
      `tiankong: ${dir} is a file, not a model directory (a folder holding ` +
        `model.json, model.onnx and vocab.txt)${hint}`,
    );
  }
  const read = async (file: string): Promise<Uint8Array> => {
    try {
      return new Uint8Array(await readFile(join(dir, file)));
    } catch (error) {
      throw new TiankongError(
        'BAD_MODEL',
        `tiankong: cannot read ${join(dir, file)}: ${describe(error)}; ` +
          'a model directory holds model.json, model.onnx and vocab.txt, and memory.bin when model.json lists it ' +
          '(scripts/export-model and scripts/build-memory write them; createFillMask({ memory: false }) skips the memory)',
      );
    }
  };
  return loadModel(
    {
      source: dir,
      kind: 'disk',
      async manifest(onBytes) {
        const bytes = await read(MANIFEST_FILE);
        onBytes(bytes.byteLength, bytes.byteLength);
        return parseManifest(new TextDecoder().decode(bytes), join(dir, MANIFEST_FILE));
      },
      async read(file, onBytes) {
        const bytes = await read(file.name);
        onBytes(bytes.byteLength, bytes.byteLength);
        return bytes;
      },
      where: (file) => join(dir, file.name),
    },
    options,
  );
}
