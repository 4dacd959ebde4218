// The everyday sentences (model/eval/everyday.jsonl): well formed, and split into a tuning half
// (dev) and a test half (val) that never share a sentence.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { EVERYDAY_PATH, everydayCases } from '../../model/tooling/eval-cases.mjs';

const HAN = /^\p{Script=Han}$/u;

describe('everyday sentences', () => {
  const rows = readFileSync(EVERYDAY_PATH, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

  test('each has one [MASK] for one Han character and at least one answer', () => {
    expect(rows.length).toBeGreaterThanOrEqual(600);
    for (const { text, answers, domain } of rows) {
      expect(text.split('[MASK]').length, text).toBe(2);
      expect(answers.length, text).toBeGreaterThan(0);
      for (const a of answers) expect(HAN.test(a), `${text}: ${a}`).toBe(true);
      expect(typeof domain).toBe('string');
    }
    expect(new Set(rows.map((r) => r.text)).size).toBe(rows.length);
  });

  test('dev and val halves are disjoint and cover the set; a case keeps every accepted answer', () => {
    const dev = everydayCases('dev');
    const val = everydayCases('val');
    expect(dev.length).toBeGreaterThanOrEqual(300);
    expect(val.length).toBeGreaterThanOrEqual(300);
    const devTexts = new Set(dev.map((c) => c.text));
    expect(val.some((c) => devTexts.has(c.text))).toBe(false);
    expect(dev.length + val.length).toBe(rows.length);
    const multi = rows.find((r) => r.answers.length > 1);
    const found = [...dev, ...val].find((c) => c.text === multi.text);
    expect(found).toEqual({ text: multi.text, answer: multi.answers[0], answers: multi.answers });
  });
});
