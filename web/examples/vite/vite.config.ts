import { defineConfig } from 'vite';

// Cross-origin isolation (COOP + COEP) lets ONNX Runtime use several threads; without these
// headers tiankong still works, on one thread. Set the same headers on your production host.
const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export default defineConfig({
  server: { headers: isolation },
  preview: { headers: isolation },
  build: { target: 'es2022' },
});
