// Calibration measures of model/tooling/calibration.mjs against values worked out by hand.
import { describe, expect, test } from 'vitest';
import { calibration, reliabilitySvg } from '../../model/tooling/calibration.mjs';

describe('calibration', () => {
  test('ECE, log-loss and Brier of a small set, by hand', () => {
    // Bin 9 (0.9..1): p 0.95, 0.95 with one right -> |0.95 - 0.5| = 0.45, weight 2/4.
    // Bin 2 (0.2..0.3): p 0.25 twice, none right -> |0.25 - 0| = 0.25, weight 2/4.
    const pairs = [
      { p: 0.95, right: true },
      { p: 0.95, right: false },
      { p: 0.25, right: false },
      { p: 0.25, right: false },
    ];
    const c = calibration(pairs);
    expect(c.ece).toBeCloseTo(0.5 * 0.45 + 0.5 * 0.25, 12);
    const logLoss = -(Math.log(0.95) + Math.log(0.05) + 2 * Math.log(0.75)) / 4;
    expect(c.logLoss).toBeCloseTo(logLoss, 12);
    expect(c.brier).toBeCloseTo((0.05 ** 2 + 0.95 ** 2 + 2 * 0.25 ** 2) / 4, 12);
    expect(c.accuracy).toBe(0.25);
    expect(c.bins[9]).toMatchObject({ cases: 2, accuracy: 0.5 });
    expect(c.bins[9].confidence).toBeCloseTo(0.95, 12);
    expect(c.bins[2]).toMatchObject({ cases: 2, accuracy: 0 });
    expect(c.bins.filter((b) => b.cases).length).toBe(2);
  });

  test('a probability of exactly 1 falls in the last bin; perfectly calibrated bins give ECE 0', () => {
    const pairs = [
      { p: 1, right: true },
      { p: 0.5, right: true },
      { p: 0.5, right: false },
    ];
    const c = calibration(pairs);
    expect(c.bins[9].cases).toBe(1);
    expect(c.ece).toBeCloseTo(0, 12);
    expect(Number.isFinite(c.logLoss)).toBe(true);
  });

  test('the reliability diagram names every suite with its ECE', () => {
    const svg = reliabilitySvg({
      'held-out <a>': calibration([{ p: 0.9, right: true }]),
      everyday: calibration([{ p: 0.3, right: false }]),
    });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('held-out &lt;a&gt; · ECE 0.100');
    expect(svg).toContain('everyday · ECE 0.300');
    expect(svg.match(/<circle/g)?.length).toBe(2);
  });
});
