#include "simd_kernels.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define TK_SIMD_WASM 1
#elif defined(__SSE2__)
#include <emmintrin.h>
#define TK_SIMD_SSE2 1
#endif

namespace tiankong {
namespace simd {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// exp(t) for t below ln(FLT_MIN) is subnormal: flushed to 0, which changes a sum
// that contains exp(0) = 1 by less than 21128 * 1.2e-38.
constexpr float kExpMinArg = -87.33654f;
}  // namespace

RowScan ScanRowScalar(const float* x, size_t n) {
  RowScan scan{kNegInf, false};
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (v != v) {
      scan.has_nan = true;
    } else if (v > scan.max) {
      scan.max = v;
    }
  }
  return scan;
}

double SumExpShiftedScalar(const float* x, size_t n, float shift) {
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(x[i] - shift);
  return sum;
}

size_t FindFirstGreaterScalar(const float* x, size_t begin, size_t n, float bound) {
  for (size_t i = begin; i < n; ++i) {
    if (x[i] > bound) return i;
  }
  return n;
}

#if defined(TK_SIMD_WASM) || defined(TK_SIMD_SSE2)
namespace {

// A thin 4-lane float/int vocabulary over the two instruction sets, so each kernel
// below is written once.
#if defined(TK_SIMD_WASM)
using F4 = v128_t;
using I4 = v128_t;
using D2 = v128_t;
inline F4 Load(const float* p) { return wasm_v128_load(p); }
inline F4 Splat(float f) { return wasm_f32x4_splat(f); }
inline F4 Add(F4 a, F4 b) { return wasm_f32x4_add(a, b); }
inline F4 Sub(F4 a, F4 b) { return wasm_f32x4_sub(a, b); }
inline F4 Mul(F4 a, F4 b) { return wasm_f32x4_mul(a, b); }
inline F4 Max(F4 a, F4 b) { return wasm_f32x4_pmax(a, b); }
inline F4 GreaterEqual(F4 a, F4 b) { return wasm_f32x4_ge(a, b); }
inline F4 Greater(F4 a, F4 b) { return wasm_f32x4_gt(a, b); }
inline F4 IsNan(F4 a) { return wasm_f32x4_ne(a, a); }
inline F4 Or(F4 a, F4 b) { return wasm_v128_or(a, b); }
inline F4 And(F4 a, F4 b) { return wasm_v128_and(a, b); }
inline bool AnyLane(F4 mask) { return wasm_v128_any_true(mask); }
inline I4 RoundToInt(F4 a) { return wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(a)); }
inline F4 IntToFloat(I4 a) { return wasm_f32x4_convert_i32x4(a); }
// 2^n for n in [-126, 127], built directly in the exponent field.
inline F4 Pow2(I4 n) { return wasm_i32x4_shl(wasm_i32x4_add(n, wasm_i32x4_splat(127)), 23); }
inline D2 ZeroD() { return wasm_f64x2_splat(0.0); }
inline D2 AddLowHalf(D2 acc, F4 v) { return wasm_f64x2_add(acc, wasm_f64x2_promote_low_f32x4(v)); }
inline D2 AddHighHalf(D2 acc, F4 v) {
  return wasm_f64x2_add(acc, wasm_f64x2_promote_low_f32x4(wasm_i64x2_shuffle(v, v, 1, 0)));
}
inline double SumD(D2 a) { return wasm_f64x2_extract_lane(a, 0) + wasm_f64x2_extract_lane(a, 1); }
constexpr const char* kIsa = "wasm-simd128";
#else
using F4 = __m128;
using I4 = __m128i;
using D2 = __m128d;
inline F4 Load(const float* p) { return _mm_loadu_ps(p); }
inline F4 Splat(float f) { return _mm_set1_ps(f); }
inline F4 Add(F4 a, F4 b) { return _mm_add_ps(a, b); }
inline F4 Sub(F4 a, F4 b) { return _mm_sub_ps(a, b); }
inline F4 Mul(F4 a, F4 b) { return _mm_mul_ps(a, b); }
inline F4 Max(F4 a, F4 b) { return _mm_max_ps(a, b); }
inline F4 GreaterEqual(F4 a, F4 b) { return _mm_cmpge_ps(a, b); }
inline F4 Greater(F4 a, F4 b) { return _mm_cmpgt_ps(a, b); }
inline F4 IsNan(F4 a) { return _mm_cmpunord_ps(a, a); }
inline F4 Or(F4 a, F4 b) { return _mm_or_ps(a, b); }
inline F4 And(F4 a, F4 b) { return _mm_and_ps(a, b); }
inline bool AnyLane(F4 mask) { return _mm_movemask_ps(mask) != 0; }
inline I4 RoundToInt(F4 a) { return _mm_cvtps_epi32(a); }  // round-to-nearest (default MXCSR)
inline F4 IntToFloat(I4 a) { return _mm_cvtepi32_ps(a); }
inline F4 Pow2(I4 n) { return _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n, _mm_set1_epi32(127)), 23)); }
inline D2 ZeroD() { return _mm_setzero_pd(); }
inline D2 AddLowHalf(D2 acc, F4 v) { return _mm_add_pd(acc, _mm_cvtps_pd(v)); }
inline D2 AddHighHalf(D2 acc, F4 v) { return _mm_add_pd(acc, _mm_cvtps_pd(_mm_movehl_ps(v, v))); }
inline double SumD(D2 a) {
  double lanes[2];
  _mm_storeu_pd(lanes, a);
  return lanes[0] + lanes[1];
}
constexpr const char* kIsa = "sse2";
#endif

inline float HorizontalMax(F4 v) {
  float lanes[4];
  std::memcpy(lanes, &v, sizeof lanes);
  float m = lanes[0];
  for (float lane : lanes) m = lane > m ? lane : m;
  return m;
}

// exp(t) for t <= 0: Cody-Waite range reduction t = n*ln2 + r, |r| <= ln2/2, then a
// degree-6 minimax polynomial for exp(r) (Cephes expf coefficients), scaled by 2^n.
// Lanes with t < kExpMinArg (including -inf) give exactly 0.
inline F4 ExpNonPositive(F4 t) {
  const F4 in_range = GreaterEqual(t, Splat(kExpMinArg));
  t = Max(t, Splat(kExpMinArg));  // keeps the arithmetic finite in discarded lanes
  const I4 n = RoundToInt(Mul(t, Splat(1.44269504088896341f)));
  const F4 nf = IntToFloat(n);
  F4 r = Sub(t, Mul(nf, Splat(0.693359375f)));
  r = Sub(r, Mul(nf, Splat(-2.12194440e-4f)));
  F4 p = Splat(1.9875691500e-4f);
  p = Add(Mul(p, r), Splat(1.3981999507e-3f));
  p = Add(Mul(p, r), Splat(8.3334519073e-3f));
  p = Add(Mul(p, r), Splat(4.1665795894e-2f));
  p = Add(Mul(p, r), Splat(1.6666665459e-1f));
  p = Add(Mul(p, r), Splat(5.0000001201e-1f));
  p = Add(Add(Mul(Mul(p, r), r), r), Splat(1.0f));
  return And(Mul(p, Pow2(n)), in_range);
}

}  // namespace

RowScan ScanRow(const float* x, size_t n) {
  size_t i = 0;
  F4 max0 = Splat(kNegInf), max1 = max0;
  F4 nan0 = Splat(0.0f), nan1 = nan0;
  for (; i + 8 <= n; i += 8) {
    const F4 a = Load(x + i), b = Load(x + i + 4);
    max0 = Max(max0, a);
    max1 = Max(max1, b);
    nan0 = Or(nan0, IsNan(a));
    nan1 = Or(nan1, IsNan(b));
  }
  RowScan tail = ScanRowScalar(x + i, n - i);
  const float head_max = HorizontalMax(Max(max0, max1));
  // A NaN lane may have leaked into max0/max1 (SSE max returns its second operand on
  // NaN); the flag already records it, and then the row is rejected anyway.
  tail.max = head_max > tail.max ? head_max : tail.max;
  tail.has_nan = tail.has_nan || AnyLane(Or(nan0, nan1));
  return tail;
}

double SumExpShifted(const float* x, size_t n, float shift) {
  size_t i = 0;
  const F4 shift4 = Splat(shift);
  D2 acc0 = ZeroD(), acc1 = ZeroD();
  for (; i + 8 <= n; i += 8) {
    const F4 e0 = ExpNonPositive(Sub(Load(x + i), shift4));
    const F4 e1 = ExpNonPositive(Sub(Load(x + i + 4), shift4));
    const F4 pair = Add(e0, e1);  // two terms in [0, 1]: one float rounding, then double
    acc0 = AddLowHalf(acc0, pair);
    acc1 = AddHighHalf(acc1, pair);
  }
  return SumD(acc0) + SumD(acc1) + SumExpShiftedScalar(x + i, n - i, shift);
}

size_t FindFirstGreater(const float* x, size_t begin, size_t n, float bound) {
  const F4 bound4 = Splat(bound);
  size_t i = begin;
  // Skip 8 at a time while nothing exceeds the bound; the scalar scan pinpoints the hit.
  while (i + 8 <= n && !AnyLane(Or(Greater(Load(x + i), bound4), Greater(Load(x + i + 4), bound4)))) {
    i += 8;
  }
  return FindFirstGreaterScalar(x, i, n, bound);
}

const char* KernelIsa() { return kIsa; }

#else  // no SIMD: the reference is the implementation

RowScan ScanRow(const float* x, size_t n) { return ScanRowScalar(x, n); }
double SumExpShifted(const float* x, size_t n, float shift) { return SumExpShiftedScalar(x, n, shift); }
size_t FindFirstGreater(const float* x, size_t begin, size_t n, float bound) {
  return FindFirstGreaterScalar(x, begin, n, bound);
}
const char* KernelIsa() { return "scalar"; }

#endif

}  // namespace simd
}  // namespace tiankong
