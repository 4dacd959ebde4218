// Calibration of the probability shown beside the first candidate: does "70%" mean right 70% of
// the time? Shared by scripts/tune-fusion (which fits it on the dev split) and
// scripts/evaluate-model (which reports it on held-out text).
//
//   const c = calibration([{ p: 0.7, right: true }, ...]);   // c.ece, c.bins, c.logLoss
//   writeFileSync('diagram.svg', reliabilitySvg({ 'held-out tatoeba': c, ... }));

const BINS = 10;
const EPS = 1e-6;

/**
 * Expected calibration error of shown top-1 probabilities (10 equal-width bins: the mean over
 * cases of |confidence - accuracy| within each case's bin), their binary log-loss and Brier score,
 * and the bins themselves ({ lo, hi, cases, confidence, accuracy }) for a reliability diagram.
 * @param {{p: number, right: boolean}[]} pairs
 */
export function calibration(pairs) {
  const bins = Array.from({ length: BINS }, (_, i) => ({ lo: i / BINS, hi: (i + 1) / BINS, n: 0, p: 0, right: 0 }));
  let logLoss = 0;
  let brier = 0;
  for (const { p, right } of pairs) {
    const bin = bins[Math.min(BINS - 1, Math.floor(p * BINS))];
    bin.n++;
    bin.p += p;
    bin.right += right ? 1 : 0;
    const q = Math.min(1 - EPS, Math.max(EPS, p));
    logLoss -= right ? Math.log(q) : Math.log(1 - q);
    brier += (p - (right ? 1 : 0)) ** 2;
  }
  const n = Math.max(pairs.length, 1);
  let ece = 0;
  for (const b of bins) if (b.n) ece += (b.n / n) * Math.abs(b.p / b.n - b.right / b.n);
  return {
    cases: pairs.length,
    ece,
    logLoss: logLoss / n,
    brier: brier / n,
    meanConfidence: pairs.reduce((s, x) => s + x.p, 0) / n,
    accuracy: pairs.reduce((s, x) => s + (x.right ? 1 : 0), 0) / n,
    bins: bins.map((b) => ({
      lo: b.lo,
      hi: b.hi,
      cases: b.n,
      confidence: b.n ? b.p / b.n : null,
      accuracy: b.n ? b.right / b.n : null,
    })),
  };
}

/**
 * A reliability diagram (SVG): one small panel per suite, accuracy against shown confidence per
 * bin (dots sized by their share of cases), the diagonal for perfect calibration, ECE in the title.
 * @param {Record<string, ReturnType<typeof calibration>>} suites
 */
export function reliabilitySvg(suites, title = 'Shown top-1 probability vs how often it is right') {
  const names = Object.keys(suites);
  const size = 170;
  const pad = 34;
  const cols = Math.min(4, names.length);
  const rows = Math.ceil(names.length / cols);
  const width = cols * (size + pad) + pad;
  const height = rows * (size + pad + 18) + 40;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${pad}" y="20" font-size="13">${escape(title)}</text>`,
  ];
  names.forEach((name, i) => {
    const c = suites[name];
    const x0 = pad + (i % cols) * (size + pad);
    const y0 = 40 + Math.floor(i / cols) * (size + pad + 18) + 14;
    const X = (v) => (x0 + v * size).toFixed(1);
    const Y = (v) => (y0 + size - v * size).toFixed(1);
    out.push(`<text x="${x0}" y="${y0 - 4}">${escape(name)} · ECE ${c.ece.toFixed(3)} · ${c.cases}</text>`);
    out.push(`<rect x="${x0}" y="${y0}" width="${size}" height="${size}" fill="none" stroke="#999"/>`);
    out.push(`<line x1="${X(0)}" y1="${Y(0)}" x2="${X(1)}" y2="${Y(1)}" stroke="#bbb" stroke-dasharray="4 3"/>`);
    const points = c.bins.filter((b) => b.cases);
    out.push(
      `<polyline fill="none" stroke="#2563eb" points="${points.map((b) => `${X(b.confidence)},${Y(b.accuracy)}`).join(' ')}"/>`,
    );
    for (const b of points) {
      const r = 2 + 6 * Math.sqrt(b.cases / Math.max(c.cases, 1));
      out.push(
        `<circle cx="${X(b.confidence)}" cy="${Y(b.accuracy)}" r="${r.toFixed(1)}" fill="#2563eb" fill-opacity="0.6"/>`,
      );
    }
    out.push(`<text x="${x0 + size / 2 - 30}" y="${y0 + size + 13}" fill="#555">shown top-1 p</text>`);
    out.push(
      `<text x="${x0 - 8}" y="${y0 + size / 2 + 20}" fill="#555" transform="rotate(-90 ${x0 - 8} ${y0 + size / 2 + 20})">right</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function escape(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
