// Matrix-vector kernels of the output layer (output_layer.h): the hidden state at a mask times the
// tied embedding table, one dot product per vocabulary row.
//
// int8 path: each table row is int8 with its own scale; the hidden vector is quantised per row to
// int16 (symmetric, as many levels as int32 accumulation allows: |q| <= 2^31 / (127 * stride),
// at most 32 767 — 16 513 for 1 024-wide rows), so products accumulate exactly in int32 and the
// activation rounding is ~100x finer than int8 activations, at the same instruction count (the
// int8 table is widened to int16 anyway for the dot product).
// f32 path: plain float dot products (the fp32 export that INT8 agreement is measured against).
//
// Each kernel has a scalar reference (always compiled; the tests' oracle) and a dispatching entry
// point: WebAssembly SIMD128 under __wasm_simd128__ (i16 widening + i32x4.dot_i16x8_s: 8
// multiply-adds per instruction), SSE4.1 natively. Relaxed SIMD (i8 dot products, 16 per
// instruction) needs a newer toolchain than this project's Emscripten 3.1.6 / LLVM 14.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tiankong {
namespace simd {

// Rows of int8 tables are padded with zeros to a multiple of this many entries.
constexpr size_t kRowAlign = 16;

// The largest |q| QuantizeRow may use for rows of `stride` entries (exact int32 sums).
int32_t ActivationLevels(size_t stride);

// Quantises x[0..n) to q[0..n) (int16, symmetric, |q| <= levels) and returns the scale
// (x ≈ q * scale); an all-zero x gives scale 0. q[n..padded) is zeroed.
float QuantizeRow(const float* x, size_t n, size_t padded, int32_t levels, int16_t* q);

// out[r] = sum_k table[r * stride + k] * x[k] for r in [0, rows), k in [0, stride);
// stride is a multiple of kRowAlign.
void GemvI8(const int8_t* table, size_t rows, size_t stride, const int16_t* x, int32_t* out);
void GemvI8Scalar(const int8_t* table, size_t rows, size_t stride, const int16_t* x, int32_t* out);

// out[r] = sum_k table[r * n + k] * x[k] (float accumulation; the scalar reference uses double).
void GemvF32(const float* table, size_t rows, size_t n, const float* x, float* out);
void GemvF32Scalar(const float* table, size_t rows, size_t n, const float* x, float* out);

}  // namespace simd
}  // namespace tiankong
