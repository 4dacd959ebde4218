import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { tiankongApp } from './tooling/app-plugin.mjs';

// Build: npx vite build --config web/app/vite.config.ts  (TIANKONG_MODEL_DIR picks the model;
// default model/default). Output in web/app/dist, served by scripts/serve.mjs.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  publicDir: false,
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  plugins: [tiankongApp()],
});
