/**
 * Precompression of the built app: every compressible file gets a FILE.br (brotli, quality 11) and
 * a FILE.gz (gzip -9) beside it when that saves at least 5%, which scripts/serve.mjs sends to
 * browsers that accept them (Content-Encoding). Brotli at quality 11 takes ~30 s for ONNX
 * Runtime's 14 MB wasm here, so results are cached by content in .cache/precompressed/ and a
 * rebuild with the same files costs nothing. Compression runs on libuv's thread pool (async zlib),
 * so a test that builds the app does not block its worker.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** Files worth compressing (PNG and other media are compressed already). */
export const COMPRESSIBLE = /\.(html|js|mjs|css|json|webmanifest|txt|wasm|onnx|bin|svg|map)$/;
/** Smaller files gain nothing worth a second request variant. */
const MIN_BYTES = 1024;
/** A variant must save at least this fraction to be written. */
const MIN_SAVING = 0.05;

function listFiles(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const full = path.join(dir, d.name);
    return d.isDirectory() ? listFiles(full, base) : [full];
  });
}

async function cached(cacheDir, key, make) {
  const file = cacheDir ? path.join(cacheDir, key) : null;
  if (file && existsSync(file)) return readFileSync(file);
  const bytes = await make();
  if (file) {
    mkdirSync(cacheDir, { recursive: true });
    const temp = `${file}.tmp-${process.pid}`;
    writeFileSync(temp, bytes);
    renameSync(temp, file);
  }
  return bytes;
}

/**
 * Writes FILE.br and FILE.gz next to each compressible file under `dir`. `cacheDir` (optional)
 * keeps compressed results by content hash. Returns { files, bytes, br, gz } totals of the
 * compressed files (bytes: their plain size; br/gz: what a browser accepting br/gzip downloads).
 */
export async function precompressDir(dir, { cacheDir, concurrency = 2 } = {}) {
  const files = listFiles(dir).filter((f) => COMPRESSIBLE.test(f));
  const totals = { files: 0, bytes: 0, br: 0, gz: 0 };
  let next = 0;
  const lane = async () => {
    while (next < files.length) {
      const file = files[next++];
      const bytes = readFileSync(file);
      totals.bytes += bytes.length;
      if (bytes.length < MIN_BYTES) {
        totals.br += bytes.length;
        totals.gz += bytes.length;
        continue;
      }
      const hash = createHash('sha256').update(bytes).digest('hex');
      const br = await cached(cacheDir, `${hash}.br`, () =>
        brotli(bytes, {
          params: {
            [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
            [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
            [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
          },
        }),
      );
      const gz = await cached(cacheDir, `${hash}.gz`, () => gzip(bytes, { level: 9 }));
      const worth = (variant) => variant.length <= bytes.length * (1 - MIN_SAVING);
      if (worth(br)) writeFileSync(`${file}.br`, br);
      if (worth(gz)) writeFileSync(`${file}.gz`, gz);
      totals.files++;
      totals.br += worth(br) ? br.length : bytes.length;
      totals.gz += worth(gz) ? gz.length : bytes.length;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return totals;
}
