// A slow link in front of a local server, for the phone profile (bench/lib/app-visits.mjs): every
// response waits `latencyMs` before its headers, and all response bodies together share one
// `bitsPerSecond` downlink (a token bucket paced in small slices), as a phone's one radio link does.
// It throttles in the server, not in the browser: Chromium's network emulation does not reach
// every request a page's Workers and service worker make.
import { request as httpRequest, createServer } from 'node:http';

/** Bytes per slice the pacer releases; small enough that parallel downloads interleave. */
const SLICE = 16 * 1024;

/**
 * Starts the proxy on 127.0.0.1 (any free port) in front of `target` (an http origin).
 * `onDelivered(path, bytes)` hears of every body slice as it passes the slow link (what the
 * browser has received, unlike the origin's own count: it sends at once into the proxy's buffers).
 * @param {{ target: string, latencyMs: number, bitsPerSecond: number,
 *   onDelivered?: (path: string, bytes: number) => void }} options
 * @returns {Promise<{ origin: string, close(): Promise<void> }>}
 */
export async function startThrottledProxy({ target, latencyMs, bitsPerSecond, onDelivered = () => {} }) {
  const bytesPerMs = bitsPerSecond / 8 / 1000;
  // The downlink is free from this time on (ms, performance.now clock).
  let linkFreeAt = 0;
  /** Waits until `bytes` more may pass the shared link. */
  const pace = (bytes) => {
    const now = performance.now();
    linkFreeAt = Math.max(linkFreeAt, now) + bytes / bytesPerMs;
    const wait = linkFreeAt - now;
    return wait > 1 ? new Promise((resolve) => setTimeout(resolve, wait)) : Promise.resolve();
  };
  const targetUrl = new URL(target);
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      {
        host: targetUrl.hostname,
        port: targetUrl.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: targetUrl.host },
      },
      (answer) => {
        setTimeout(async () => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          try {
            for await (const chunk of answer) {
              for (let at = 0; at < chunk.length; at += SLICE) {
                const slice = chunk.subarray(at, at + SLICE);
                await pace(slice.length);
                if (!res.write(slice)) await new Promise((resolve) => res.once('drain', resolve));
                onDelivered(req.url ?? '', slice.length);
              }
            }
            res.end();
          } catch {
            res.destroy();
          }
        }, latencyMs);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
