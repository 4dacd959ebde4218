// IEEE 754 binary16 ("half") decoded from its fields, for tests that read float16 data themselves,
// independently of the code under test (DataView.getFloat16 is not in Node 20).

/** The value of the half with these 16 bits: (-1)^s × 2^(e-15) × 1.f, 2^-14 × 0.f for e = 0; e = 31: ±Infinity or NaN. */
export function halfValue(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * (exponent === 0 ? fraction * 2 ** -24 : (1024 + fraction) * 2 ** (exponent - 25));
}
