/**
 * The app icon, drawn in code and encoded as PNG with Node's zlib (no image tools needed).
 * Motif: three character tiles in a row, the middle one is the filled-in blank.
 */
import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** Encodes straight (non-premultiplied) RGBA pixels, row-major, as a PNG file. */
export function encodePng(width, height, rgba) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA, deflate, no filter method extras, no interlace
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0; // filter type None
    Buffer.from(rgba.buffer, rgba.byteOffset + y * width * 4, width * 4).copy(raw, y * (width * 4 + 1) + 1);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Signed distance from (x, y) to a rounded box centred at (cx, cy) with half-size (hw, hh). */
function roundedBox(x, y, cx, cy, hw, hh, r) {
  const qx = Math.abs(x - cx) - hw + r;
  const qy = Math.abs(y - cy) - hh + r;
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
}

const mix = (a, b, t) => a.map((v, i) => v + (b[i] - v) * t);
const INDIGO = [79, 70, 229];
const VIOLET = [147, 51, 234];
const WHITE = [255, 255, 255];
const AMBER = [251, 191, 36];

/** Straight-alpha colour of the icon at unit coordinates (u, v); `maskable` = full bleed, content in the safe zone. */
function shade(u, v, maskable) {
  const inside = maskable ? -1 : roundedBox(u, v, 0.5, 0.5, 0.5, 0.5, 0.22);
  if (inside > 0) return [0, 0, 0, 0];
  let color = mix(INDIGO, VIOLET, (u + v) / 2);
  // Content scaled into the 80% safe zone on maskable icons.
  const s = maskable ? 0.8 : 1;
  const x = 0.5 + (u - 0.5) / s;
  const y = 0.5 + (v - 0.5) / s;
  const tile = 0.11;
  for (const cx of [0.24, 0.76]) {
    if (roundedBox(x, y, cx, 0.47, tile, tile, 0.035) < 0) color = mix(color, WHITE, 0.38);
  }
  const middle = roundedBox(x, y, 0.5, 0.47, tile, tile, 0.035);
  if (middle < 0) color = mix(AMBER, [253, 224, 71], Math.max(0, 0.47 + tile - y) / (2 * tile));
  else if (middle < 0.03) color = mix(color, AMBER, 0.35 * (1 - middle / 0.03)); // soft glow
  if (roundedBox(x, y, 0.5, 0.7, 0.37, 0.022, 0.022) < 0) color = mix(color, WHITE, 0.85); // the line text sits on
  return [...color, 255];
}

/** Renders the icon at `size` px with 4x4 supersampling; returns PNG bytes. */
export function renderIcon(size, { maskable = false } = {}) {
  const rgba = new Uint8Array(size * size * 4);
  const n = 4;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      const sum = [0, 0, 0, 0];
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const [r, g, b, a] = shade((px + (sx + 0.5) / n) / size, (py + (sy + 0.5) / n) / size, maskable);
          sum[0] += r * a;
          sum[1] += g * a;
          sum[2] += b * a;
          sum[3] += a;
        }
      }
      const o = (py * size + px) * 4;
      const alpha = sum[3] / (n * n);
      for (let c = 0; c < 3; c++) rgba[o + c] = sum[3] ? Math.round(sum[c] / sum[3]) : 0;
      rgba[o + 3] = Math.round(alpha);
    }
  }
  return encodePng(size, size, rgba);
}

/** Every icon file the app ships: name -> { size, maskable, purpose }. */
export const ICONS = {
  'icon-192.png': { size: 192, maskable: false },
  'icon-512.png': { size: 512, maskable: false },
  'icon-maskable-512.png': { size: 512, maskable: true },
  'apple-touch-icon.png': { size: 180, maskable: true },
  'favicon-32.png': { size: 32, maskable: false },
};
