// The benchmark chart as a standalone SVG (no dependency): one panel per (masks, threads),
// grouped bars of warm p50 latency per sentence length for each contender, the speedup of
// tiankong over transformers.js written over each group.

const COLORS = { tiankong: '#d9480f', transformers: '#1c7ed6', native: '#868e96' };
const LABELS = {
  tiankong: 'tiankong (wasm)',
  transformers: 'transformers.js (wasm)',
  native: 'onnxruntime-node (native)',
};
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** A "nice" axis maximum ≥ v whose quarters are round too (1, 2, 3, 4, 6 or 8 × 10^n). */
function niceMax(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 3, 4, 6, 8, 10].map((m) => m * p).find((x) => x >= v);
}

/**
 * @param {{rows: Array<{threads: number, masks: number, chars: number, tokens: number,
 *   contenders: Record<string, {p50: number}>, speedup_vs_transformers: number}>, title: string}} report
 * @returns {string} SVG document
 */
export function renderChart({ rows, title }) {
  const threadList = [...new Set(rows.map((r) => r.threads))];
  const maskList = [...new Set(rows.map((r) => r.masks))];
  const names = Object.keys(COLORS);
  const panelW = 460;
  const panelH = 260;
  const margin = { left: 60, top: 70, gap: 40 };
  const width = Math.max(1000, margin.left + threadList.length * (panelW + margin.gap));
  const height = margin.top + maskList.length * (panelH + 70) + 20;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${margin.left}" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  names.forEach((n, i) => {
    const x = margin.left + i * 200;
    out.push(
      `<rect x="${x}" y="34" width="12" height="12" fill="${COLORS[n]}"/>`,
      `<text x="${x + 16}" y="44">${esc(LABELS[n])}</text>`,
    );
  });
  maskList.forEach((masks, mi) =>
    threadList.forEach((threads, ti) => {
      const panel = rows.filter((r) => r.masks === masks && r.threads === threads);
      const x0 = margin.left + ti * (panelW + margin.gap);
      const y0 = margin.top + mi * (panelH + 70) + 20;
      const max = niceMax(Math.max(...panel.flatMap((r) => names.map((n) => r.contenders[n]?.p50 ?? 0))));
      const y = (v) => y0 + panelH - (v / max) * panelH;
      out.push(
        `<text x="${x0}" y="${y0 - 8}" font-weight="bold">${masks} mask${masks > 1 ? 's' : ''}, ${threads} thread${threads > 1 ? 's' : ''}: warm p50 ms (lower is better), ×N = tiankong speedup</text>`,
      );
      for (let k = 0; k <= 4; k++) {
        const v = (max * k) / 4;
        out.push(
          `<line x1="${x0}" x2="${x0 + panelW}" y1="${y(v)}" y2="${y(v)}" stroke="#dee2e6"/>`,
          `<text x="${x0 - 4}" y="${y(v) + 4}" text-anchor="end">${+v.toPrecision(3)}</text>`,
        );
      }
      const groupW = panelW / panel.length;
      const barW = (groupW - 16) / names.length;
      panel.forEach((row, gi) => {
        const gx = x0 + gi * groupW + 8;
        names.forEach((n, bi) => {
          const v = row.contenders[n]?.p50;
          if (v === undefined) return;
          out.push(
            `<rect x="${gx + bi * barW}" y="${y(v)}" width="${barW - 2}" height="${y0 + panelH - y(v)}" fill="${COLORS[n]}"><title>${esc(LABELS[n])}: ${v.toFixed(1)} ms</title></rect>`,
          );
        });
        const top = Math.min(...names.map((n) => y(row.contenders[n]?.p50 ?? 0)));
        out.push(
          `<text x="${gx + (groupW - 16) / 2}" y="${top - 4}" text-anchor="middle" font-weight="bold">×${row.speedup_vs_transformers.toFixed(2)}</text>`,
          `<text x="${gx + (groupW - 16) / 2}" y="${y0 + panelH + 14}" text-anchor="middle">${row.chars} chars</text>`,
        );
      });
      out.push(`<line x1="${x0}" x2="${x0 + panelW}" y1="${y0 + panelH}" y2="${y0 + panelH}" stroke="#495057"/>`);
    }),
  );
  out.push(
    `<text x="${margin.left}" y="${height - 8}" fill="#495057">Shared, loaded machine: absolute times drift; the three contenders ran interleaved, so compare within a group.</text>`,
    '</svg>',
  );
  return out.join('\n') + '\n';
}
