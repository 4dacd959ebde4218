/**
 * The page: wires the editor, the service worker, the runtime and the result views.
 * State lives here; every piece it uses is a small module of its own.
 */
import './styles.css';
import { copyText } from './clipboard.js';
import { MaskEditor } from './editor.js';
import { fillSentence, type Filled } from './fill-state.js';
import { formatBytes, formatMs } from './format.js';
import { findCompletedIdioms, type IdiomAsset } from './idiom-lookup.js';
import { fullMemoryReading, quickMemoryReading, type MemoryReading } from './memory.js';
import { errorCode, errorDetail, MESSAGES } from './messages.js';
import { fillWithWord, HeatmapView, renderWords } from './explain-view.js';
import { startServiceWorker, type ServiceWorkerState } from './pwa.js';
import { renderFilled, renderMaskResults } from './results-view.js';
import { appUrl, importRuntime, type FillMaskModel, type FillOptions, type FillResult, type LoadProgress } from './runtime.js';

const MODEL_URL = 'models/default/';
const IDIOMS_URL = 'idioms.json';

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`index.html lacks #${id}`);
  return node as T;
}

const ui = {
  predict: byId<HTMLButtonElement>('predict'),
  insertMask: byId<HTMLButtonElement>('insert-mask'),
  status: byId('status'),
  progress: byId('progress'),
  progressBar: byId<HTMLProgressElement>('progress-bar'),
  progressText: byId('progress-text'),
  error: byId('error'),
  errorTitle: byId('error-title'),
  errorAdvice: byId('error-advice'),
  errorDetail: byId('error-detail'),
  errorRetry: byId<HTMLButtonElement>('error-retry'),
  results: byId('results'),
  maskResults: byId('mask-results'),
  filled: byId('filled'),
  copy: byId<HTMLButtonElement>('copy'),
  useFilled: byId<HTMLButtonElement>('use-filled'),
  copyFeedback: byId('copy-feedback'),
  idiomCard: byId('idiom-card'),
  idiomText: byId('idiom-text'),
  idiomPinyin: byId('idiom-pinyin'),
  idiomExplanation: byId('idiom-explanation'),
  timings: byId('timings'),
  engine: byId('engine'),
  memory: byId('memory'),
  topK: byId<HTMLSelectElement>('opt-topk'),
  threshold: byId<HTMLSelectElement>('opt-threshold'),
  filter: byId<HTMLSelectElement>('opt-filter'),
  updateBanner: byId('update-banner'),
  updateReload: byId<HTMLButtonElement>('update-reload'),
};

let model: FillMaskModel | null = null;
let serviceWorker: ServiceWorkerState = 'none';
let current: { result: FillResult; choice: number[]; filled: Filled } | null = null;
let inflight: AbortController | null = null;
let idioms: Promise<IdiomAsset | null> | null = null;
let retryAction: (() => void) | null = null;
const heatmap = new HeatmapView(ui.maskResults);

const editor = new MaskEditor(byId<HTMLTextAreaElement>('input'), byId('editor-backdrop'), byId('input-warnings'), () => {
  if (!ui.error.dataset.loadError) hideError();
});

// ---- status, progress, errors -----------------------------------------------------------

function setStatus(text: string): void {
  ui.status.textContent = text;
}

function showProgress(label: string, loaded: number, total: number): void {
  ui.progress.hidden = false;
  ui.progressBar.max = Math.max(total, 1);
  ui.progressBar.value = Math.min(loaded, total);
  const percent = total > 0 ? ` (${Math.floor((100 * loaded) / total)}%)` : '';
  ui.progressText.textContent = `${label} ${formatBytes(loaded)} / ${total > 0 ? formatBytes(total) : '?'}${percent}`;
}

function hideProgress(): void {
  ui.progress.hidden = true;
}

/** Shows the Chinese message for `error`'s code, its English detail, and a retry button where retrying can help. */
function showError(error: unknown, retry?: () => void, isLoadError = false): void {
  const message = MESSAGES[errorCode(error)];
  ui.errorTitle.textContent = message.title;
  ui.errorAdvice.textContent = message.advice;
  ui.errorDetail.textContent = errorDetail(error);
  retryAction = message.retry && retry ? retry : null;
  ui.errorRetry.hidden = !retryAction;
  ui.error.hidden = false;
  if (isLoadError) ui.error.dataset.loadError = '1';
  else delete ui.error.dataset.loadError;
}

function hideError(): void {
  ui.error.hidden = true;
  delete ui.error.dataset.loadError;
}

ui.errorRetry.addEventListener('click', () => {
  const action = retryAction;
  hideError();
  action?.();
});

// ---- loading ------------------------------------------------------------------------------

function describeEngine(tk: FillMaskModel): string {
  const s = tk.stats();
  const threads = s.threads > 1 ? `${s.threads} 线程` : `单线程（${s.threadsReason}）`;
  return `引擎 ${s.backend}${s.simd ? ' + SIMD' : ''} · ${threads} · 模型 ${s.model.name}`;
}

function trackLoadProgress(): (progress: LoadProgress) => void {
  const files = new Map<string, LoadProgress>();
  return (progress) => {
    files.set(progress.file, progress);
    const all = [...files.values()];
    const loaded = all.reduce((sum, p) => sum + p.loaded, 0);
    const total = all.reduce((sum, p) => sum + p.total, 0);
    // model.json is always revalidated; the model files say whether anything is downloaded.
    const fromNetwork = all.some((p) => p.source === 'network' && p.file !== 'model.json');
    setStatus(fromNetwork ? '正在下载模型…' : '正在从本地缓存读取模型（无需下载）…');
    showProgress(fromNetwork ? '已下载' : '已读取', loaded, total);
  };
}

async function loadModel(): Promise<void> {
  hideError();
  setStatus('正在加载运行库…');
  try {
    const runtime = await importRuntime();
    const backend = new URLSearchParams(location.search).get('backend');
    model = await runtime.createFillMask({
      model: appUrl(MODEL_URL),
      backend: backend === 'webgpu' || backend === 'auto' ? backend : 'wasm',
      onProgress: trackLoadProgress(),
    });
  } catch (error) {
    hideProgress();
    setStatus('模型未能加载');
    showError(error, () => void loadModel(), true);
    return;
  }
  hideProgress();
  setStatus(serviceWorker === 'controlled' ? '✅ 模型已就绪 · 已可离线使用' : '✅ 模型已就绪');
  ui.engine.textContent = describeEngine(model);
  ui.predict.disabled = false;
  if (editor.value.trim()) void predict();
}

// ---- predicting -----------------------------------------------------------------------------

function fillOptions(signal: AbortSignal): FillOptions {
  const filter = ui.filter.value;
  return {
    topK: Number(ui.topK.value),
    threshold: Number(ui.threshold.value),
    ...(filter === 'chinese' || filter === 'no-punctuation' ? { filter } : {}),
    joint: true,
    signal,
  };
}

async function predict(): Promise<void> {
  if (!model) return;
  inflight?.abort();
  const controller = new AbortController();
  inflight = controller;
  ui.predict.setAttribute('aria-busy', 'true');
  try {
    const result = await model.fill(editor.value, fillOptions(controller.signal));
    hideError();
    show(result);
  } catch (error) {
    if (controller.signal.aborted) return;
    ui.results.hidden = true;
    current = null;
    showError(error, () => void predict());
  } finally {
    if (inflight === controller) {
      inflight = null;
      ui.predict.removeAttribute('aria-busy');
    }
  }
}

function show(result: FillResult): void {
  const choice = result.masks.map(() => 0);
  current = { result, choice, filled: fillSentence(result, choice) };
  render();
  heatmap.clear();
  renderWords(ui.maskResults, result, (word, candidate) => {
    if (!current) return;
    current.filled = fillWithWord(current.result, current.choice, word, candidate);
    renderFilled(ui.filled, current.filled);
    void showIdiom(current.filled);
  });
  ui.results.hidden = false;
  // On a phone the results start below the fold: bring them up, but never move what is already visible.
  if (ui.results.getBoundingClientRect().top > window.innerHeight * 0.8) {
    ui.results.scrollIntoView({ behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth', block: 'start' });
  }
  const t = result.timings;
  ui.timings.textContent = `分词 ${formatMs(t.tokenizeMs)} · 推理 ${result.cached ? '— (缓存命中)' : formatMs(t.inferenceMs)} · ` +
    `解码 ${formatMs(t.decodeMs)} · 合计 ${formatMs(t.totalMs)}`;
  if (model) ui.engine.textContent = describeEngine(model);
  void reportMemory();
}

function render(): void {
  if (!current) return;
  const { result, choice } = current;
  current.filled = fillSentence(result, choice);
  renderMaskResults(ui.maskResults, result, choice, (maskIndex, candidateIndex) => {
    choice[maskIndex] = candidateIndex;
    render();
    const { token } = result.masks[maskIndex]!.candidates[candidateIndex]!;
    void heatmap.show(token, (signal) => model!.explain(result.text, maskIndex, token, { signal }));
  });
  renderFilled(ui.filled, current.filled);
  ui.copyFeedback.textContent = '';
  void showIdiom(current.filled);
}

// ---- idiom card ---------------------------------------------------------------------------

function loadIdioms(): Promise<IdiomAsset | null> {
  idioms ??= fetch(appUrl(IDIOMS_URL))
    .then((response) => (response.ok ? (response.json() as Promise<IdiomAsset>) : null))
    .then((asset) => (asset?.format === 'tiankong-idioms/1' ? asset : null))
    .catch(() => null);
  return idioms;
}

async function showIdiom(filled: Filled): Promise<void> {
  const asset = await loadIdioms();
  if (current?.filled !== filled) return; // a newer render happened meanwhile
  const match = asset ? findCompletedIdioms(filled.text, filled.spans, asset)[0] : undefined;
  ui.idiomCard.hidden = !match;
  if (!match) return;
  ui.idiomText.textContent = match.idiom;
  ui.idiomPinyin.textContent = match.pinyin;
  ui.idiomExplanation.textContent = match.explanation;
}

// ---- memory -------------------------------------------------------------------------------

function describeMemory(reading: MemoryReading): string {
  return reading.scope === 'total'
    ? `内存 ${formatBytes(reading.bytes)}（页面合计，含 Worker 与 WebAssembly）`
    : `内存 ${formatBytes(reading.bytes)}（页面 JS 堆，不含 Worker）`;
}

let memoryMeasuring = false;

/** Shows the quick reading now and the full one when the browser delivers it (one measurement at a time). */
async function reportMemory(): Promise<void> {
  const quick = quickMemoryReading();
  if (quick && !ui.memory.dataset.scope) ui.memory.textContent = describeMemory(quick);
  if (memoryMeasuring) return;
  memoryMeasuring = true;
  try {
    const full = await fullMemoryReading();
    if (full) {
      ui.memory.textContent = describeMemory(full);
      ui.memory.dataset.scope = full.scope;
    }
  } finally {
    memoryMeasuring = false;
  }
}

// ---- wiring -------------------------------------------------------------------------------

ui.predict.addEventListener('click', () => void predict());
ui.insertMask.addEventListener('click', () => editor.insertMask());
byId('input').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    void predict();
  }
});
for (const chip of document.querySelectorAll<HTMLButtonElement>('[data-example]')) {
  chip.addEventListener('click', () => {
    editor.value = chip.dataset.example ?? '';
    editor.focus();
    void predict();
  });
}
for (const select of [ui.topK, ui.threshold, ui.filter]) {
  select.addEventListener('change', () => {
    if (current) void predict();
  });
}
ui.copy.addEventListener('click', async () => {
  if (!current) return;
  const ok = await copyText(current.filled.text);
  ui.copyFeedback.textContent = ok ? '✓ 已复制' : '复制失败，请手动选中句子复制';
});
ui.useFilled.addEventListener('click', () => {
  if (!current) return;
  editor.value = current.filled.text;
  editor.focus();
});

async function boot(): Promise<void> {
  setStatus('正在准备…');
  serviceWorker = await startServiceWorker({
    onPrecacheProgress: ({ loaded, total }) => {
      setStatus('首次使用：正在下载模型和程序文件，完成后可离线使用…');
      showProgress('已下载', loaded, total);
    },
    onUpdateReady: (activate) => {
      ui.updateBanner.hidden = false;
      ui.updateReload.onclick = activate;
    },
    onWarning: (message) => console.warn(`tiankong: ${message}; continuing without offline support`),
  });
  if (serviceWorker === 'reloading') {
    setStatus('正在启用多线程，页面将刷新一次…');
    return;
  }
  await loadModel();
}

void boot();
