#include "gemv_kernels.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif defined(__SSE4_1__)
#include <smmintrin.h>
#endif

namespace tiankong {
namespace simd {

void GemvF32Scalar(const float* table, size_t rows, size_t n, const float* x, float* out) {
  for (size_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (size_t k = 0; k < n; ++k) sum += static_cast<double>(table[r * n + k]) * x[k];
    out[r] = static_cast<float>(sum);
  }
}

#if defined(__wasm_simd128__)

void GemvF32(const float* table, size_t rows, size_t n, const float* x, float* out) {
  const size_t vector_end = n / 4 * 4;
  for (size_t r = 0; r < rows; ++r) {
    const float* row = table + r * n;
    v128_t acc = wasm_f32x4_splat(0.0f);
    for (size_t k = 0; k < vector_end; k += 4) {
      acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_v128_load(row + k), wasm_v128_load(x + k)));
    }
    float sum = wasm_f32x4_extract_lane(acc, 0) + wasm_f32x4_extract_lane(acc, 1) + wasm_f32x4_extract_lane(acc, 2) +
                wasm_f32x4_extract_lane(acc, 3);
    for (size_t k = vector_end; k < n; ++k) sum += row[k] * x[k];
    out[r] = sum;
  }
}

#elif defined(__SSE4_1__)

void GemvF32(const float* table, size_t rows, size_t n, const float* x, float* out) {
  const size_t vector_end = n / 4 * 4;
  for (size_t r = 0; r < rows; ++r) {
    const float* row = table + r * n;
    __m128 acc = _mm_setzero_ps();
    for (size_t k = 0; k < vector_end; k += 4)
      acc = _mm_add_ps(acc, _mm_mul_ps(_mm_loadu_ps(row + k), _mm_loadu_ps(x + k)));
    alignas(16) float lanes[4];
    _mm_store_ps(lanes, acc);
    float sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    for (size_t k = vector_end; k < n; ++k) sum += row[k] * x[k];
    out[r] = sum;
  }
}

#else

void GemvF32(const float* table, size_t rows, size_t n, const float* x, float* out) {
  GemvF32Scalar(table, rows, n, x, out);
}

#endif

}  // namespace simd
}  // namespace tiankong
