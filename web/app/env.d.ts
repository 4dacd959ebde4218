/** Build-time constants injected by build/app-plugin.mjs. */

/** Path of the runtime's browser entry relative to the page, e.g. "tiankong/browser.js". */
declare const __TIANKONG_RUNTIME_ENTRY__: string;
