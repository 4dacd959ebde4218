/**
 * The page: wires the editor, the service worker, the runtime and the result views.
 * State lives here; every piece it uses is a small module of its own.
 *
 * First visit of a cross-origin-isolated page: the runtime and the model load at once, the
 * corpus memory's first part before the rest, so a preview (the memory alone, marked as such)
 * answers a few seconds in and the model's answer replaces it; the
 * service worker is registered once the model is ready, and its precache then revalidates what
 * the page already downloaded (304s) and finds the model in the runtime's cache. A page that is
 * not isolated (a static host without COOP/COEP) lets the service worker precache first and
 * reloads once under its isolation headers, so the model runs with threads.
 */
import './styles.css';
import { CheckMode } from './check-mode.js';
import { copyText } from './clipboard.js';
import { MaskEditor } from './editor.js';
import { chosenToken, type Choice, fillChosen, type Filled, initialChoice } from './fill-state.js';
import { formatBytes, formatMs } from './format.js';
import { findCompletedIdioms, type IdiomAsset } from './idiom-lookup.js';
import { fullMemoryReading, quickMemoryReading, type MemoryReading } from './memory.js';
import { describeError, singleThreadReason } from './messages.js';
import { HeatmapView, renderWords } from './explain-view.js';
import { startServiceWorker, type ServiceWorkerHooks, type ServiceWorkerState } from './pwa.js';
import { renderFilled, renderMaskResults, type ShownResult } from './results-view.js';
import { ToneView } from './tone-view.js';
import {
  appUrl,
  importRuntime,
  type CheckResult,
  type FillMaskModel,
  type FillMaskPreview,
  type FillOptions,
  type LoadProgress,
} from './runtime.js';

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
  errorMore: byId<HTMLDetailsElement>('error-more'),
  errorRetry: byId<HTMLButtonElement>('error-retry'),
  results: byId('results'),
  staleNote: byId('stale-note'),
  previewNote: byId('preview-note'),
  kbdHint: byId('kbd-hint'),
  optionsSummary: byId('options-summary'),
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
  modeFill: byId<HTMLButtonElement>('mode-fill'),
  modeCheck: byId<HTMLButtonElement>('mode-check'),
  checkPanel: byId('check-panel'),
  updateBanner: byId('update-banner'),
  updateReload: byId<HTMLButtonElement>('update-reload'),
};

let model: FillMaskModel | null = null;
/** Answers from the corpus memory alone until the model is ready (CreateFillMaskOptions.onPreview). */
let preview: FillMaskPreview | null = null;
let serviceWorker: ServiceWorkerState = 'none';
let current: { result: ShownResult; state: Choice; filled: Filled } | null = null;
let inflight: AbortController | null = null;
/** True while the shown results belong to a text the user has edited since. */
let stale = false;
/** First visit of an isolated page: register the service worker once the model has loaded. */
let offlineCopyPending = false;
let idioms: Promise<IdiomAsset | null> | null = null;
let retryAction: (() => void) | null = null;
const heatmap = new HeatmapView(ui.maskResults);

/** Created after the editor (it draws into it), whose constructor already reports the (empty) text. */
let checkMode: CheckMode | undefined = undefined;
let toneView: ToneView | undefined = undefined;
const editor = new MaskEditor(
  byId<HTMLTextAreaElement>('input'),
  byId('editor-backdrop'),
  byId('input-warnings'),
  (text) => {
    if (!ui.error.dataset.loadError) hideError();
    markStale(current !== null && text !== current.result.text);
    checkMode?.textChanged(text);
    toneView?.textChanged(text);
  },
);

toneView = new ToneView({
  toggle: byId<HTMLButtonElement>('tone-toggle'),
  panel: byId('tone-view'),
  line: byId('tone-line'),
  note: byId('tone-note'),
  source: () => model ?? preview,
});
toneView.textChanged(editor.value);

checkMode = new CheckMode({
  editor,
  textarea: byId<HTMLTextAreaElement>('input'),
  editorBox: byId('editor'),
  panel: ui.checkPanel,
  model: () => model,
  onChecked: showCheckTimings,
});

/**
 * Marks the results as belonging to an older text (or not): dimmed under a note, "用作输入"
 * disabled so it cannot overwrite the edit, and the work still running for the old text (a
 * prediction, a heatmap) aborted so the next prediction does not wait behind it.
 */
function markStale(isStale: boolean): void {
  if (isStale && !stale) {
    inflight?.abort('superseded');
    heatmap.clear();
  }
  stale = isStale;
  ui.results.classList.toggle('stale', isStale);
  ui.staleNote.hidden = !isStale;
  ui.useFilled.disabled = isStale;
  ui.useFilled.title = isStale ? '输入已修改，不会用旧结果覆盖' : '';
}

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

/** Shows the Chinese message for `error`'s code (its English detail folded under 技术细节) and a retry button where retrying can help. */
function showError(error: unknown, retry?: () => void, isLoadError = false): void {
  const message = describeError(error);
  ui.errorTitle.textContent = message.title;
  ui.errorAdvice.textContent = message.advice;
  ui.errorDetail.textContent = message.detail;
  ui.errorMore.open = false;
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
  const threads =
    s.threads > 1
      ? `${s.threads} 线程`
      : `单线程（${singleThreadReason(globalThis.crossOriginIsolated === true, s.threadsReason === 'requested')}）`;
  ui.engine.title = s.threadsReason; // the runtime's own (English) words, on hover
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
      onPreview: previewReady,
    });
  } catch (error) {
    hideProgress();
    setStatus('模型未能加载');
    showError(error, () => void loadModel(), true);
    return;
  }
  hideProgress();
  setReady();
  ui.engine.textContent = describeEngine(model);
  ui.predict.disabled = false;
  checkMode?.modelReady();
  toneView?.sourceReady();
  const first = editor.value.trim() && !checkMode?.isEnabled ? predict() : Promise.resolve();
  if (offlineCopyPending) {
    // After the first answer: the offline copy must not compete with it.
    offlineCopyPending = false;
    void first.then(saveOfflineCopy);
  }
}

/** The preview can answer: the page works at once, marked as a preview, while the model downloads. */
function previewReady(ready: FillMaskPreview): void {
  if (model) return;
  preview = ready;
  ui.predict.disabled = false;
  toneView?.sourceReady();
  if (editor.value.trim() && !checkMode?.isEnabled) void predict();
}

function setReady(): void {
  if (model) setStatus(serviceWorker === 'controlled' ? '✅ 模型已就绪 · 已可离线使用' : '✅ 模型已就绪');
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

/**
 * Where the filters hid every candidate of a mask, its unfiltered top candidates (the runtime's
 * cached model output makes the second fill cheap), marked `unfiltered` for the page to grey out.
 */
async function withUnfiltered(
  tk: Pick<FillMaskModel, 'fill'>,
  result: ShownResult,
  options: FillOptions,
): Promise<ShownResult> {
  if (!result.masks.some((mask) => mask.candidates.length === 0)) return result;
  const all = await tk.fill(result.text, { topK: options.topK, threshold: 0, signal: options.signal });
  return {
    ...result,
    masks: result.masks.map((mask, i) =>
      mask.candidates.length > 0 ? mask : { ...mask, candidates: all.masks[i]?.candidates ?? [], unfiltered: true },
    ),
  };
}

async function predict(): Promise<void> {
  const filler = model ?? preview;
  if (!filler) return;
  // A new prediction supersedes the running one and any heatmap still being computed.
  inflight?.abort('superseded');
  heatmap.clear();
  const controller = new AbortController();
  inflight = controller;
  const text = editor.value;
  ui.predict.setAttribute('aria-busy', 'true');
  try {
    const options = fillOptions(controller.signal);
    const result = await withUnfiltered(filler, await filler.fill(text, options), options);
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

function show(result: ShownResult): void {
  const state = initialChoice(result);
  current = { result, state, filled: fillChosen(result, state) };
  heatmap.clear();
  render();
  markStale(result.text !== editor.value);
  ui.previewNote.hidden = result.preview !== true;
  ui.results.hidden = false;
  // On a phone the results start below the fold: bring them up, but never move what is already visible.
  if (ui.results.getBoundingClientRect().top > window.innerHeight * 0.8) {
    ui.results.scrollIntoView({
      behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth',
      block: 'start',
    });
  }
  const t = result.timings;
  ui.timings.textContent =
    `分词 ${formatMs(t.tokenizeMs)} · 推理 ${result.cached ? '— (缓存命中)' : formatMs(t.inferenceMs)} · ` +
    `解码 ${formatMs(t.decodeMs)} · 合计 ${formatMs(t.totalMs)}`;
  if (model) ui.engine.textContent = describeEngine(model);
  void reportMemory();
}

/** The candidate shown as picked for a mask: its own pick, or the one spelling its word's pick. */
function pressedCandidate(result: ShownResult, state: Choice, maskIndex: number): number {
  const picked = state.choice[maskIndex] ?? 0;
  if (picked >= 0) return picked;
  const token = chosenToken(result, state, maskIndex);
  return result.masks[maskIndex]!.candidates.findIndex((c) => c.token === token);
}

/** The word pick shown as pressed: only while every mask of the word shows it. */
function pressedWord(result: ShownResult, state: Choice, wordIndex: number): number {
  const word = result.words?.[wordIndex];
  return word && word.maskIndices.every((i) => state.choice[i] === -1) ? (state.wordPicks[wordIndex] ?? -1) : -1;
}

function render(): void {
  if (!current) return;
  const { result, state } = current;
  current.filled = fillChosen(result, state);
  renderMaskResults(
    ui.maskResults,
    result,
    (maskIndex) => pressedCandidate(result, state, maskIndex),
    (maskIndex, candidateIndex) => {
      state.choice[maskIndex] = candidateIndex;
      render();
      // The old text's heatmap would not match what the user sees in the editor; a preview has no model to explain with.
      if (stale || !model || result.preview) return;
      const { token } = result.masks[maskIndex]!.candidates[candidateIndex]!;
      const tk = model;
      void heatmap.show(token, (signal) => tk.explain(result.text, maskIndex, token, { signal }));
    },
  );
  renderWords(
    ui.maskResults,
    result,
    (wordIndex) => pressedWord(result, state, wordIndex),
    (wordIndex, candidateIndex) => {
      state.wordPicks[wordIndex] = candidateIndex;
      for (const index of result.words![wordIndex]!.maskIndices) state.choice[index] = -1;
      render();
    },
  );
  renderFilled(ui.filled, current.filled);
  ui.copyFeedback.textContent = '';
  void showIdiom(current.filled);
}

// ---- 纠错 mode ------------------------------------------------------------------------------

type Mode = 'fill' | 'check';
const MODE_KEY = 'tiankong:mode';

/** Switches between 填空 and 纠错 (remembered for the next visit); the editor's text stays. */
function setMode(mode: Mode): void {
  document.body.classList.toggle('mode-check', mode === 'check');
  ui.modeFill.setAttribute('aria-pressed', String(mode === 'fill'));
  ui.modeCheck.setAttribute('aria-pressed', String(mode === 'check'));
  try {
    localStorage.setItem(MODE_KEY, mode);
  } catch {
    // Storage blocked (private mode, policy): the mode is simply not remembered.
  }
  if (mode === 'check') {
    inflight?.abort('superseded');
    heatmap.clear();
    if (!checkMode!.isEnabled) checkMode!.enable();
  } else if (checkMode!.isEnabled) {
    checkMode!.disable();
  }
}

function savedMode(): Mode {
  try {
    return localStorage.getItem(MODE_KEY) === 'check' ? 'check' : 'fill';
  } catch {
    return 'fill';
  }
}

function showCheckTimings(result: CheckResult): void {
  const t = result.timings;
  ui.timings.textContent =
    `纠错 ${result.checked} 字 · 推理 ${result.cached ? '— (缓存命中)' : `${formatMs(t.inferenceMs)}（${t.runs} 次）`} · ` +
    `合计 ${formatMs(t.totalMs)}`;
  if (model) ui.engine.textContent = describeEngine(model);
  void reportMemory();
}

// ---- idiom card ---------------------------------------------------------------------------

/** True when a filled blank sits inside four consecutive Chinese characters: only then can it complete an idiom. */
function couldCompleteIdiom(filled: Filled): boolean {
  const han = /\p{Script=Han}/u;
  return filled.spans.some((span) => {
    let from = span.start;
    while (from > 0 && han.test(filled.text[from - 1]!)) from--;
    let to = span.end;
    while (to < filled.text.length && han.test(filled.text[to]!)) to++;
    return to - from >= 4 && [...filled.text.slice(span.start, span.end)].every((c) => han.test(c));
  });
}

/** The idiom dictionary, fetched the first time a filled sentence could hold an idiom. */
function loadIdioms(): Promise<IdiomAsset | null> {
  idioms ??= fetch(appUrl(IDIOMS_URL))
    .then((response) => (response.ok ? (response.json() as Promise<IdiomAsset>) : null))
    .then((asset) => (asset?.format === 'tiankong-idioms/1' ? asset : null))
    .catch(() => null);
  return idioms;
}

async function showIdiom(filled: Filled): Promise<void> {
  if (!idioms && !couldCompleteIdiom(filled)) {
    ui.idiomCard.hidden = true;
    return;
  }
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
    if (checkMode!.isEnabled) checkMode!.checkNow();
    else void predict();
  }
});
for (const chip of document.querySelectorAll<HTMLButtonElement>('[data-example]')) {
  chip.addEventListener('click', () => {
    editor.value = chip.dataset.example ?? '';
    editor.focus();
    void predict();
  });
}
for (const chip of document.querySelectorAll<HTMLButtonElement>('[data-check-example]')) {
  chip.addEventListener('click', () => {
    editor.value = chip.dataset.checkExample ?? '';
    editor.focus();
    checkMode!.checkNow();
  });
}
ui.modeFill.addEventListener('click', () => setMode('fill'));
ui.modeCheck.addEventListener('click', () => setMode('check'));
setMode(savedMode());
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
  // Never over an edit: the button is disabled while the results are stale.
  if (!current || stale || editor.value !== current.result.text) return;
  editor.value = current.filled.text;
  editor.focus();
});

/** "候选 5 个 · 最低 1% · 只要汉字" beside 选项, so the closed panel says what it holds. */
function describeOptions(): void {
  const label = (select: HTMLSelectElement) => select.selectedOptions[0]?.textContent ?? '';
  ui.optionsSummary.textContent = `候选 ${ui.topK.value} 个 · 最低概率 ${label(ui.threshold)} · ${label(ui.filter)}`;
}
for (const select of [ui.topK, ui.threshold, ui.filter]) select.addEventListener('change', describeOptions);
describeOptions();

/** Keyboard shortcuts mean nothing where a touch screen is the only pointer (CSS covers most such devices). */
if (matchMedia('(any-pointer: coarse)').matches && !matchMedia('(any-pointer: fine)').matches) ui.kbdHint.hidden = true;

function serviceWorkerHooks(foreground: boolean): ServiceWorkerHooks {
  return {
    onPrecacheProgress: ({ loaded, total }) => {
      if (!foreground) return; // the model is loaded already: the offline copy is saved quietly
      setStatus('首次使用：正在下载模型和程序文件，完成后可离线使用…');
      showProgress('已下载', loaded, total);
    },
    onUpdateReady: (activate) => {
      ui.updateBanner.hidden = false;
      ui.updateReload.onclick = activate;
    },
    onWarning: (message) => console.warn(`tiankong: ${message}; continuing without offline support`),
  };
}

async function boot(): Promise<void> {
  setStatus('正在准备…');
  const controlled = 'serviceWorker' in navigator && navigator.serviceWorker.controller !== null;
  if (controlled || !globalThis.crossOriginIsolated) {
    // Everything comes from the caches; or the page needs the worker's isolation headers first (it reloads once).
    serviceWorker = await startServiceWorker(serviceWorkerHooks(true));
    if (serviceWorker === 'reloading') {
      setStatus('正在启用多线程，页面将刷新一次…');
      return;
    }
    await loadModel();
    return;
  }
  // First visit of an isolated page: the model at once, the offline copy once it is ready.
  offlineCopyPending = true;
  await loadModel();
}

/** Registers the service worker after the first successful load (see the module comment). */
async function saveOfflineCopy(): Promise<void> {
  serviceWorker = await startServiceWorker(serviceWorkerHooks(false));
  setReady();
}

void boot();
