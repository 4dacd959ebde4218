#include "gemv_kernels.h"

#include <algorithm>
#include <cmath>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif defined(__SSE4_1__)
#include <smmintrin.h>
#endif

namespace tiankong {
namespace simd {

int32_t ActivationLevels(size_t stride) {
  const int64_t levels = ((int64_t{1} << 31) - 1) / (127 * static_cast<int64_t>(std::max<size_t>(stride, 1)));
  return static_cast<int32_t>(std::min<int64_t>(levels, 32767));
}

float QuantizeRow(const float* x, size_t n, size_t padded, int32_t levels, int16_t* q) {
  float max = 0.0f;
  for (size_t i = 0; i < n; ++i) max = std::max(max, std::fabs(x[i]));
  const float limit = static_cast<float>(levels);
  const float scale = max / limit;
  const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;
  for (size_t i = 0; i < n; ++i) {
    q[i] = static_cast<int16_t>(std::max(-limit, std::min(limit, std::nearbyint(x[i] * inverse))));
  }
  for (size_t i = n; i < padded; ++i) q[i] = 0;
  return scale;
}

void GemvI8Scalar(const int8_t* table, size_t rows, size_t stride, const int16_t* x, int32_t* out) {
  for (size_t r = 0; r < rows; ++r) {
    const int8_t* row = table + r * stride;
    int32_t sum = 0;
    for (size_t k = 0; k < stride; ++k) sum += int32_t{row[k]} * int32_t{x[k]};
    out[r] = sum;
  }
}

void GemvF32Scalar(const float* table, size_t rows, size_t n, const float* x, float* out) {
  for (size_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (size_t k = 0; k < n; ++k) sum += static_cast<double>(table[r * n + k]) * x[k];
    out[r] = static_cast<float>(sum);
  }
}

#if defined(__wasm_simd128__)

void GemvI8(const int8_t* table, size_t rows, size_t stride, const int16_t* x, int32_t* out) {
  for (size_t r = 0; r < rows; ++r) {
    const int8_t* row = table + r * stride;
    v128_t acc = wasm_i32x4_splat(0);
    for (size_t k = 0; k < stride; k += 16) {
      const v128_t a = wasm_v128_load(row + k);
      acc = wasm_i32x4_add(acc, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(a), wasm_v128_load(x + k)));
      acc = wasm_i32x4_add(acc, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(a), wasm_v128_load(x + k + 8)));
    }
    out[r] = wasm_i32x4_extract_lane(acc, 0) + wasm_i32x4_extract_lane(acc, 1) + wasm_i32x4_extract_lane(acc, 2) +
             wasm_i32x4_extract_lane(acc, 3);
  }
}

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

void GemvI8(const int8_t* table, size_t rows, size_t stride, const int16_t* x, int32_t* out) {
  for (size_t r = 0; r < rows; ++r) {
    const int8_t* row = table + r * stride;
    __m128i acc = _mm_setzero_si128();
    for (size_t k = 0; k < stride; k += 16) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + k));
      const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + k));
      const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + k + 8));
      acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_cvtepi8_epi16(a), lo));
      acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_cvtepi8_epi16(_mm_srli_si128(a, 8)), hi));
    }
    acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, 0x4E));
    acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, 0xB1));
    out[r] = _mm_cvtsi128_si32(acc);
  }
}

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

void GemvI8(const int8_t* table, size_t rows, size_t stride, const int16_t* x, int32_t* out) {
  GemvI8Scalar(table, rows, stride, x, out);
}

void GemvF32(const float* table, size_t rows, size_t n, const float* x, float* out) {
  GemvF32Scalar(table, rows, n, x, out);
}

#endif

}  // namespace simd
}  // namespace tiankong
