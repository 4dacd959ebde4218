// Matrix-vector kernel of the output layer (output_layer.h): the hidden state at a mask times the
// tied embedding table, one float dot product per vocabulary row. Every head.bin table type is
// widened to float32 at load, so this is the only product the layer computes. (An int8 x int16
// kernel served int8 tables until 2026-12; its error was the table's int8 rounding, which
// widening keeps, so it went: see output_layer.cc.)
//
// A scalar reference (always compiled; the tests' oracle) and a dispatching entry point:
// WebAssembly SIMD128 under __wasm_simd128__, SSE4.1 natively.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tiankong {
namespace simd {

// Rows of int8 tables in head.bin are padded with zeros to a multiple of this many entries.
constexpr size_t kRowAlign = 16;

// out[r] = sum_k table[r * n + k] * x[k] (float accumulation; the scalar reference uses double).
void GemvF32(const float* table, size_t rows, size_t n, const float* x, float* out);
void GemvF32Scalar(const float* table, size_t rows, size_t n, const float* x, float* out);

}  // namespace simd
}  // namespace tiankong
