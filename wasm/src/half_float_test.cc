// fp16::HalfToFloat over all 65 536 half bit patterns, against a reference computed from the
// fields with ldexp (value = (-1)^s × 2^(e-15) × 1.f, or 2^-14 × 0.f for e = 0), compared bit for
// bit (so -0 must stay -0); plus a few well-known values and the byte-order of HalvesToFloats.
#include "half_float.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace tiankong {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

TEST(HalfFloat, EveryBitPatternMatchesTheLdexpReference) {
  int finite = 0, rejected = 0;
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const int sign = (h >> 15) & 1, exponent = (h >> 10) & 31, fraction = h & 1023;
    float got = 12345.0f;  // must stay untouched when rejected
    const bool ok = fp16::HalfToFloat(static_cast<uint16_t>(h), &got);
    if (exponent == 31) {
      EXPECT_FALSE(ok) << std::hex << h;
      EXPECT_EQ(got, 12345.0f) << std::hex << h;
      ++rejected;
      continue;
    }
    ASSERT_TRUE(ok) << std::hex << h;
    const double magnitude =
        exponent == 0 ? std::ldexp(double(fraction), -24) : std::ldexp(double(1024 + fraction), exponent - 25);
    const float expected = static_cast<float>(sign ? -magnitude : magnitude);  // exact: ≤ 11 significant bits
    ASSERT_EQ(double(expected), sign ? -magnitude : magnitude);
    EXPECT_EQ(Bits(got), Bits(expected)) << std::hex << h << ": " << got << " vs " << expected;
    EXPECT_TRUE(std::isfinite(got));
    ++finite;
  }
  EXPECT_EQ(finite, 63488);
  EXPECT_EQ(rejected, 2048);
}

TEST(HalfFloat, KnownValues) {
  const struct {
    uint16_t bits;
    float value;
  } cases[] = {
      {0x3c00, 1.0f},
      {0xc000, -2.0f},
      {0x3555, 0.333251953125f},
      {0x7bff, 65504.0f},                // largest finite
      {0x0400, 6.103515625e-05f},        // smallest normal, 2^-14
      {0x03ff, 6.097555160522461e-05f},  // largest subnormal
      {0x0001, 5.960464477539063e-08f},  // smallest subnormal, 2^-24
      {0x8001, -5.960464477539063e-08f},
  };
  for (const auto& c : cases) {
    float got = 0;
    ASSERT_TRUE(fp16::HalfToFloat(c.bits, &got)) << std::hex << c.bits;
    EXPECT_EQ(got, c.value) << std::hex << c.bits;
  }
  float zero = 1;
  ASSERT_TRUE(fp16::HalfToFloat(0x8000, &zero));
  EXPECT_EQ(Bits(zero), 0x80000000u);  // -0
  ASSERT_TRUE(fp16::HalfToFloat(0x0000, &zero));
  EXPECT_EQ(Bits(zero), 0u);
  for (uint16_t bits : {0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xffff}) {
    float f;
    EXPECT_FALSE(fp16::HalfToFloat(bits, &f)) << std::hex << bits;
  }
}

TEST(HalfFloat, HalvesToFloatsReadsLittleEndianAndStopsAtNonFinite) {
  const uint8_t bytes[] = {0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0x00, 0x7c, 0x00, 0x3c};
  std::vector<float> out(5, 7.0f);
  EXPECT_TRUE(fp16::HalvesToFloats(bytes + 0, 3, out.data()));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 5.960464477539063e-08f);
  std::vector<float> odd(2);
  EXPECT_TRUE(fp16::HalvesToFloats(bytes + 1, 1, odd.data()));  // unaligned: bytes 3c 00 -> 0x003c
  EXPECT_EQ(odd[0], std::ldexp(60.0f, -24));
  EXPECT_FALSE(fp16::HalvesToFloats(bytes, 5, out.data()));  // the 4th is +infinity
}

}  // namespace
}  // namespace tiankong
