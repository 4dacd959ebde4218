#include "gemv_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace tiankong {
namespace simd {
namespace {

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
