#include "simd_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace tiankong {
namespace simd {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Independent oracle: long double exp and accumulation.
long double ExactSumExp(const std::vector<float>& x, float shift) {
  long double sum = 0;
  for (float v : x) sum += std::exp(static_cast<long double>(v) - shift);
  return sum;
}

void ExpectKernelsAgree(const std::vector<float>& x, const char* what) {
  SCOPED_TRACE(what);
  SCOPED_TRACE("n=" + std::to_string(x.size()));
  const RowScan fast = ScanRow(x.data(), x.size());
  const RowScan reference = ScanRowScalar(x.data(), x.size());
  EXPECT_EQ(fast.has_nan, reference.has_nan);
  EXPECT_EQ(fast.max, reference.max);
  if (reference.has_nan || !std::isfinite(reference.max)) return;
  const long double exact = ExactSumExp(x, reference.max);
  const double simd_sum = SumExpShifted(x.data(), x.size(), reference.max);
  const double scalar_sum = SumExpShiftedScalar(x.data(), x.size(), reference.max);
  EXPECT_LT(std::fabs(simd_sum - exact) / exact, 1e-6) << simd_sum << " vs " << (double)exact;
  EXPECT_LT(std::fabs(scalar_sum - exact) / exact, 1e-6) << scalar_sum << " vs " << (double)exact;
}

std::vector<float> RandomRow(std::mt19937& rng, size_t n, float stddev, float mean = 0.0f) {
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> row(n);
  for (float& v : row) v = dist(rng);
  return row;
}

TEST(SimdKernels, ReportsCompiledIsa) {
  const std::string isa = KernelIsa();
  EXPECT_TRUE(isa == "wasm-simd128" || isa == "sse2" || isa == "scalar") << isa;
}

TEST(SimdKernels, EmptyRow) {
  const RowScan scan = ScanRow(nullptr, 0);
  EXPECT_EQ(scan.max, -kInf);
  EXPECT_FALSE(scan.has_nan);
  EXPECT_EQ(SumExpShifted(nullptr, 0, 0.0f), 0.0);
}

TEST(SimdKernels, RandomRowsOfEveryTailLength) {
  std::mt19937 rng(1);
  for (size_t n = 1; n <= 40; ++n) ExpectKernelsAgree(RandomRow(rng, n, 3.0f), "short");
  for (int trial = 0; trial < 20; ++trial) {
    ExpectKernelsAgree(RandomRow(rng, 21128, 2.0f + trial), "vocab-sized");
  }
}

TEST(SimdKernels, TiesAndConstantRows) {
  std::mt19937 rng(2);
  std::vector<float> row = RandomRow(rng, 21128, 4.0f);
  for (float& v : row) v = std::round(v);  // many exact ties, including at the max
  ExpectKernelsAgree(row, "rounded");
  ExpectKernelsAgree(std::vector<float>(21128, 7.25f), "constant");
}

TEST(SimdKernels, NegativeInfinityContributesNothing) {
  std::mt19937 rng(3);
  std::vector<float> row = RandomRow(rng, 1001, 5.0f);
  for (size_t i = 0; i < row.size(); i += 3) row[i] = -kInf;
  ExpectKernelsAgree(row, "sparse -inf");
  std::vector<float> single(1003, -kInf);
  single[1001] = 2.0f;  // lands in the scalar tail
  ExpectKernelsAgree(single, "one finite in tail");
  single[1001] = -kInf;
  single[5] = -3.0f;  // lands in the vector body
  ExpectKernelsAgree(single, "one finite in body");
  const std::vector<float> all_neg_inf(100, -kInf);
  EXPECT_EQ(ScanRow(all_neg_inf.data(), all_neg_inf.size()).max, -kInf);
}

TEST(SimdKernels, LargeMagnitudesAndUnderflow) {
  std::mt19937 rng(4);
  ExpectKernelsAgree(RandomRow(rng, 21128, 1e4f), "huge spread: almost every term underflows");
  ExpectKernelsAgree(RandomRow(rng, 21128, 1.0f, 3e4f), "large offset");
  ExpectKernelsAgree(RandomRow(rng, 21128, 1.0f, -3e4f), "large negative offset");
  std::vector<float> row(64, -3e38f);
  row[17] = 3e38f;
  ExpectKernelsAgree(row, "near FLT_MAX");
  std::vector<float> edge(64);
  for (size_t i = 0; i < edge.size(); ++i) edge[i] = -86.0f - 0.05f * i;  // around ln(FLT_MIN)
  edge[0] = 0.0f;
  ExpectKernelsAgree(edge, "underflow boundary");
}

TEST(SimdKernels, FindsNanAndPositiveInfinityAnywhere) {
  std::mt19937 rng(5);
  for (size_t n : {1u, 7u, 8u, 9u, 64u, 1003u}) {
    for (size_t pos : {size_t{0}, n / 2, n - 1}) {
      std::vector<float> row = RandomRow(rng, n, 1.0f);
      row[pos] = kNaN;
      EXPECT_TRUE(ScanRow(row.data(), n).has_nan) << "n=" << n << " pos=" << pos;
      row[pos] = kInf;
      const RowScan scan = ScanRow(row.data(), n);
      EXPECT_FALSE(scan.has_nan);
      EXPECT_EQ(scan.max, kInf) << "n=" << n << " pos=" << pos;
    }
  }
}

TEST(SimdKernels, FindFirstGreaterMatchesScalar) {
  std::mt19937 rng(6);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = rng() % 70;
    std::vector<float> row = RandomRow(rng, n, 1.0f);
    for (float& v : row) {
      if (rng() % 9 == 0) v = -kInf;
      if (rng() % 11 == 0) v = kNaN;  // NaN is never greater than anything
    }
    const float bound = trial % 4 == 0 ? -kInf : std::normal_distribution<float>(1.5f, 0.5f)(rng);
    for (size_t begin = 0; begin <= n; ++begin) {
      ASSERT_EQ(FindFirstGreater(row.data(), begin, n, bound), FindFirstGreaterScalar(row.data(), begin, n, bound))
          << "trial " << trial << " n=" << n << " begin=" << begin;
    }
  }
  const std::vector<float> equal(20, 2.0f);
  EXPECT_EQ(FindFirstGreater(equal.data(), 0, equal.size(), 2.0f), equal.size()) << "strictly greater";
}

}  // namespace
}  // namespace simd
}  // namespace tiankong
