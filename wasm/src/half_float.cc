#include "half_float.h"

#include <cstring>

namespace tiankong {
namespace fp16 {

bool HalfToFloat(uint16_t bits, float* out) {
  // half: sign 1 | exponent 5 (bias 15) | fraction 10; float: 1 | 8 (bias 127) | 23.
  const uint32_t sign = static_cast<uint32_t>(bits >> 15) << 31;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t fraction = bits & 0x3ffu;
  uint32_t f;
  if (exponent == 0x1fu) return false;  // infinity or NaN
  if (exponent != 0) {
    f = sign | ((exponent + (127 - 15)) << 23) | (fraction << 13);  // normal: rebias
  } else if (fraction == 0) {
    f = sign;  // ±0
  } else {
    // Subnormal: fraction × 2^-24 = 1.xxx × 2^e. Shift the leading 1 up to the implicit bit 10;
    // each shift halves the scale. Starting point: bit 10 set would mean 2^-14 (biased 113).
    uint32_t biased = 127 - 14;
    while ((fraction & 0x400u) == 0) {
      fraction <<= 1;
      --biased;
    }
    f = sign | (biased << 23) | ((fraction & 0x3ffu) << 13);
  }
  std::memcpy(out, &f, sizeof f);
  return true;
}

bool HalvesToFloats(const uint8_t* le_bytes, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) {
    const uint16_t bits = static_cast<uint16_t>(le_bytes[2 * i] | (le_bytes[2 * i + 1] << 8));
    if (!HalfToFloat(bits, out + i)) return false;
  }
  return true;
}

}  // namespace fp16
}  // namespace tiankong
