#include "gemv_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace tiankong {
namespace simd {
namespace {

TEST(QuantizeRow, SymmetricScaleAndZeroPadding) {
  const std::vector<float> x = {0.5f, -1.27f, 0.0f, 1.0f, 0.01f};
  std::vector<int16_t> q(16, 99);
  const float scale = QuantizeRow(x.data(), x.size(), q.size(), 8191, q.data());
  EXPECT_FLOAT_EQ(scale, 1.27f / 8191.0f);
  EXPECT_EQ(q[1], -8191);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(q[i] * scale, x[i], scale / 2 + 1e-7f) << i;
  for (size_t i = x.size(); i < q.size(); ++i) EXPECT_EQ(q[i], 0) << i;
  std::vector<float> zeros(5, 0.0f);
  EXPECT_EQ(QuantizeRow(zeros.data(), zeros.size(), q.size(), 8191, q.data()), 0.0f);
  EXPECT_EQ(q[0], 0);
}

TEST(ActivationLevels, KeepsInt32SumsExact) {
  EXPECT_EQ(ActivationLevels(16), 32767);
  EXPECT_EQ(ActivationLevels(1024), 16513);  // floor((2^31 - 1) / (127 * 1024))
  for (size_t stride : {16u, 256u, 768u, 1024u, 4096u}) {
    EXPECT_LE(int64_t{ActivationLevels(stride)} * 127 * static_cast<int64_t>(stride), (int64_t{1} << 31) - 1);
  }
}

// The SIMD kernels against the scalar references on random data, at the extremes of int8 and for
// every padded row length the output layer meets (H = 32 .. 1024).
TEST(GemvI8, MatchesScalarExactly) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> value(-127, 127);
  for (size_t stride : {16u, 32u, 224u, 384u, 768u, 1024u}) {
    const size_t rows = 37;
    const int32_t levels = ActivationLevels(stride);
    std::uniform_int_distribution<int> activation(-levels, levels);
    std::vector<int8_t> table(rows * stride);
    std::vector<int16_t> x(stride);
    for (auto& t : table) t = static_cast<int8_t>(value(rng));
    for (auto& v : x) v = static_cast<int16_t>(activation(rng));
    table[0] = -127;  // largest products
    x[0] = static_cast<int16_t>(-levels);
    std::vector<int32_t> fast(rows), slow(rows);
    GemvI8(table.data(), rows, stride, x.data(), fast.data());
    GemvI8Scalar(table.data(), rows, stride, x.data(), slow.data());
    EXPECT_EQ(fast, slow) << "stride " << stride;
  }
  // Every product at its largest: the largest sum a 1024-wide row makes, still exact.
  std::vector<int8_t> ones(1024, 127);
  std::vector<int16_t> x(1024, static_cast<int16_t>(ActivationLevels(1024)));
  int32_t out = 0;
  GemvI8(ones.data(), 1, 1024, x.data(), &out);
  EXPECT_EQ(out, int64_t{127} * ActivationLevels(1024) * 1024);
}

TEST(GemvF32, MatchesScalarWithinRounding) {
  std::mt19937 rng(11);
  std::normal_distribution<float> value(0.0f, 1.0f);
  for (size_t n : {1u, 3u, 4u, 7u, 64u, 225u, 768u}) {
    const size_t rows = 19;
    std::vector<float> table(rows * n), x(n), fast(rows), slow(rows);
    for (auto& t : table) t = value(rng);
    for (auto& v : x) v = value(rng);
    GemvF32(table.data(), rows, n, x.data(), fast.data());
    GemvF32Scalar(table.data(), rows, n, x.data(), slow.data());
    for (size_t r = 0; r < rows; ++r)
      EXPECT_NEAR(fast[r], slow[r], 1e-4 * std::sqrt(static_cast<double>(n)) + 1e-5) << n;
  }
}

}  // namespace
}  // namespace simd
}  // namespace tiankong
