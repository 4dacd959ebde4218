/**
 * The tiankong Worker (dedicated module Worker): owns the C++ core, the model and the ONNX
 * Runtime Web session, so inference never blocks the page. Started by browser.ts; speaks
 * browser/protocol.ts through browser/host.ts (shared with the Node entry's worker thread,
 * node-worker.ts). One model per Worker. It stays at the package root (dist/worker.js, the
 * "./worker" export) with the one bare import of the runtime, so hosts that map that import
 * (bundlers, import maps, the app build) find it in one file.
 */
import * as ort from 'onnxruntime-web/wasm';
import { serveEngine } from './browser/host.js';
import type { Request, WireCreateOptions } from './browser/protocol.js';
import { loadEngineCore } from './core/engine-core.js';
import { FillMaskEngine } from './engine/engine.js';
import { type CreateSettings, checkCreateOptions, resolveThreads } from './engine/options.js';
import type { InferenceRuntime, OrtModule } from './engine/session.js';
import { isModelBytes, loadModelFromBytes } from './model/bytes.js';
import { loadModelFromUrl } from './model/url.js';
import type { LoadProgress } from './types.js';

const scope = self as unknown as DedicatedWorkerGlobalScope;

/**
 * ONNX Runtime Web for checked options: threads only when the page is cross-origin isolated
 * (SharedArrayBuffer); WebGPU is not bundled. ORT finds its own wasm by default (its bundle
 * names it by a literal `new URL('ort-wasm-simd-threaded.wasm', import.meta.url)`, so bundlers
 * emit it from onnxruntime-web: the package ships no copy); `ortBase` overrides where it is.
 */
function createWorkerRuntime({ backend, threads }: CreateSettings, ortBase: string | undefined): InferenceRuntime {
  const cores = navigator.hardwareConcurrency || 1;
  let count: number;
  let threadsReason: string;
  if (!scope.crossOriginIsolated) {
    count = 1;
    threadsReason =
      'the page is not cross-origin isolated, so WebAssembly threads are unavailable; serve it with ' +
      '"Cross-Origin-Opener-Policy: same-origin" and "Cross-Origin-Embedder-Policy: require-corp" to use several threads';
  } else {
    ({ count, reason: threadsReason } = resolveThreads(threads, cores));
  }
  const hasWebGpu = 'gpu' in navigator;
  const backendReason =
    backend === 'webgpu'
      ? `WebGPU ${hasWebGpu ? 'is available but' : 'is not available in this browser and'} is not bundled ` +
        "(onnxruntime-web's WebGPU build adds a second ~26 MB wasm; this INT8 model targets the wasm CPU kernels): using wasm"
      : backend === 'wasm'
        ? 'requested'
        : 'default (WebAssembly, SIMD)';
  ort.env.wasm.numThreads = count;
  if (ortBase) {
    ort.env.wasm.wasmPaths = {
      mjs: new URL('ort-wasm-simd-threaded.mjs', ortBase),
      wasm: new URL('ort-wasm-simd-threaded.wasm', ortBase),
    };
  }
  return {
    ort: ort as unknown as OrtModule,
    backend: 'wasm',
    backendReason,
    threads: count,
    threadsReason,
    sessionOptions: { executionProviders: ['wasm'], graphOptimizationLevel: 'all' },
  };
}

/** A one-node ONNX graph (Identity, 67 bytes): a session over it starts ONNX Runtime's wasm. */
const WARM_UP_MODEL = 'CAcSADo3ChAKAXgSAXkiCElkZW50aXR5EgF3Wg8KAXgSCgoICAESBAoCCAFiDwoBeRIKCggIARIECgIIAUIECgAQDQ==';

/**
 * Starts ONNX Runtime's wasm (download, compile, thread pool) while the model downloads, by
 * opening and closing a session on a tiny graph. Never rejects: a failure shows again, with its
 * real cause, when the engine opens the model's session.
 */
async function warmUpOrt(): Promise<void> {
  try {
    const bytes = Uint8Array.from(atob(WARM_UP_MODEL), (c) => c.charCodeAt(0));
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    await session.release();
  } catch {
    // reported by the real session
  }
}

/**
 * Loads the model and builds the engine. The model's download, the core and ONNX Runtime's
 * start-up overlap (each is seconds on a slow link or CPU). With `preview` and a split memory the
 * memory's first part comes first, alone on the link, and the preview engine answers from it
 * (onPreview) while ONNX Runtime, the model and the rest of the memory follow.
 */
async function create(
  options: WireCreateOptions,
  {
    signal,
    onProgress,
    onPreview,
  }: { signal: AbortSignal; onProgress: (p: LoadProgress) => void; onPreview: (preview: FillMaskEngine) => void },
): Promise<FillMaskEngine> {
  const settings = checkCreateOptions(options, ['assets', 'files', 'preview']);
  const runtime = createWorkerRuntime(settings, options.assets?.ort);
  const corePromise = loadEngineCore(options.assets?.core);
  let warmUp: Promise<void> | null = null;
  const onMemoryFirst = FillMaskEngine.previewHook(corePromise, { runtime, cache: settings.cache }, onPreview);
  const withPreview = options.preview === true && settings.memory;
  const progress = {
    // With a preview, ONNX Runtime's wasm starts downloading with the model, after the first answer's bytes.
    onProgress: (p: LoadProgress) => {
      if (p.file === 'model.onnx') warmUp ??= warmUpOrt();
      onProgress(p);
    },
    signal,
    memory: settings.memory,
    ...(withPreview ? { onMemoryFirst } : {}),
  };
  if (!withPreview) warmUp = warmUpOrt();
  const [model, core] = await Promise.allSettled([
    isModelBytes(options.model)
      ? loadModelFromBytes(options.model, progress)
      : loadModelFromUrl(new URL(options.model), progress, options.files),
    corePromise,
  ]);
  if (model.status === 'rejected' || core.status === 'rejected') {
    if (core.status === 'fulfilled') core.value.dispose();
    throw model.status === 'rejected' ? model.reason : (core as PromiseRejectedResult).reason;
  }
  await (warmUp ?? warmUpOrt());
  try {
    return await FillMaskEngine.create({ model: model.value, core: core.value, runtime, cache: settings.cache });
  } catch (error) {
    core.value.dispose();
    throw error;
  }
}

/**
 * A bundler may put ONNX Runtime into this module's chunk; its pthread workers then start this
 * same chunk (named "em-pthread") and ORT answers their messages: this module must not.
 */
const isOrtThread = typeof scope.name === 'string' && scope.name.startsWith('em-pthread');

if (!isOrtThread) {
  const onRequest = serveEngine({ post: (reply) => scope.postMessage(reply), create });
  scope.onmessage = (event: MessageEvent<Request>) => void onRequest(event.data);
}
