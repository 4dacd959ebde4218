// Build-time tooling of the app: the PNG icons (checked with Python's zlib, an independent
// decoder) and the vendoring of the runtime's bare imports.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { encodePng, renderIcon } from '../../web/app/tooling/icons.mjs';
import { resolveForBrowser, vendorBareImports } from '../../web/app/tooling/vendor-imports.mjs';

const REPO = path.resolve(import.meta.dirname, '../..');

/** Python decodes the PNG (chunk CRCs, zlib, filter bytes) and returns width, height and RGBA bytes as hex. */
function decodeWithPython(png: Buffer): { width: number; height: number; rgba: string } {
  const script = `
import json, struct, sys, zlib
data = sys.stdin.buffer.read()
assert data[:8] == b'\\x89PNG\\r\\n\\x1a\\n', 'signature'
pos, idat, ihdr = 8, b'', None
while pos < len(data):
    (length,) = struct.unpack('>I', data[pos:pos + 4]); kind = data[pos + 4:pos + 8]; body = data[pos + 8:pos + 8 + length]
    (crc,) = struct.unpack('>I', data[pos + 8 + length:pos + 12 + length])
    assert zlib.crc32(kind + body) == crc, 'crc of ' + kind.decode()
    if kind == b'IHDR': ihdr = struct.unpack('>IIBBBBB', body)
    if kind == b'IDAT': idat += body
    pos += 12 + length
w, h, depth, color = ihdr[:4]
assert (depth, color) == (8, 6), 'RGBA8'
raw = zlib.decompress(idat); stride = w * 4 + 1
assert len(raw) == stride * h and all(raw[y * stride] == 0 for y in range(h)), 'filter bytes'
print(json.dumps({'width': w, 'height': h, 'rgba': b''.join(raw[y * stride + 1:(y + 1) * stride] for y in range(h)).hex()}))`;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script], { input: png }).toString());
}

describe('icons', () => {
  test('encodePng round-trips through an independent decoder', () => {
    const rgba = new Uint8Array([
      255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 255, 0, 10, 20, 30, 40, 1, 2, 3, 4, 250, 251, 252, 253,
    ]);
    expect(decodeWithPython(encodePng(3, 2, rgba))).toEqual({
      width: 3,
      height: 2,
      rgba: Buffer.from(rgba).toString('hex'),
    });
  });

  test('the icon: transparent rounded corners, opaque full-bleed maskable variant', () => {
    const plain = decodeWithPython(renderIcon(48));
    const maskable = decodeWithPython(renderIcon(48, { maskable: true }));
    const alpha = (icon: { rgba: string }, x: number, y: number) =>
      parseInt(icon.rgba.slice((y * 48 + x) * 8 + 6, (y * 48 + x) * 8 + 8), 16);
    expect(plain.width).toBe(48);
    expect(alpha(plain, 0, 0)).toBe(0);
    expect(alpha(plain, 24, 24)).toBe(255);
    expect(alpha(maskable, 0, 0)).toBe(255);
  });
});

describe('vendoring bare imports', () => {
  test('onnxruntime-web/wasm resolves to the bundle a browser bundler picks; the wasm it names comes along', () => {
    expect(resolveForBrowser('onnxruntime-web/wasm', REPO)).toBe(
      path.join(REPO, 'node_modules/onnxruntime-web/dist/ort.wasm.bundle.min.mjs'),
    );
    const dir = mkdtempSync(path.join(tmpdir(), 'tiankong-vendor-'));
    try {
      const file = path.join(dir, 'worker.js');
      writeFileSync(file, "import * as ort from 'onnxruntime-web/wasm';\n");
      vendorBareImports(dir, [file], REPO);
      const wasm = path.join(dir, 'vendor', 'ort-wasm-simd-threaded.wasm');
      expect(
        readFileSync(wasm).equals(
          readFileSync(path.join(REPO, 'node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm')),
        ),
      ).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('rewrites import statements only, never examples in comments; node: imports stay', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tiankong-vendor-'));
    try {
      const file = path.join(dir, 'worker.js');
      writeFileSync(
        file,
        [
          '/**',
          " * import { createFillMask } from 'tiankong';",
          ' */',
          "import * as ort from 'onnxruntime-web/wasm';",
          "import { readFile } from 'node:fs/promises';",
          "import { x } from './local.js';",
          "export { y } from 'onnxruntime-web/wasm';",
        ].join('\n'),
      );
      const vendored = vendorBareImports(dir, [file], REPO);
      expect(vendored).toEqual({ 'onnxruntime-web/wasm': 'vendor/onnxruntime-web__wasm.mjs' });
      expect(readFileSync(file, 'utf8').split('\n')).toEqual([
        '/**',
        " * import { createFillMask } from 'tiankong';",
        ' */',
        "import * as ort from './vendor/onnxruntime-web__wasm.mjs';",
        "import { readFile } from 'node:fs/promises';",
        "import { x } from './local.js';",
        "export { y } from './vendor/onnxruntime-web__wasm.mjs';",
      ]);
      expect(readFileSync(path.join(dir, 'vendor/onnxruntime-web__wasm.mjs'))).toEqual(
        readFileSync(path.join(REPO, 'node_modules/onnxruntime-web/dist/ort.wasm.bundle.min.mjs')),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
