// IEEE 754 binary16 ("half", float16) to float32, for tables stored as halves (head.bin dtype 3).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tiankong {
namespace fp16 {

// Contract: for every finite half `bits` (normal, subnormal, +0 and -0) stores in *out the float
// of exactly the same value and sign (every half is exactly representable as a float: 11-bit
// significand, exponents -24..15) and returns true. For the 2 × 1 024 patterns with an all-ones
// exponent (±infinity and every NaN) it returns false and leaves *out untouched. No rounding, no
// dependence on the floating-point environment (bit manipulation only).
bool HalfToFloat(uint16_t bits, float* out);

// Converts n little-endian halves at `le_bytes` (any alignment) to out[0..n). Returns false at the
// first non-finite half (out then holds the ones before it).
bool HalvesToFloats(const uint8_t* le_bytes, size_t n, float* out);

}  // namespace fp16
}  // namespace tiankong
