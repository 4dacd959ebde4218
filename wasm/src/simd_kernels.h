// Vectorizable row kernels of the top-k decoder: row maximum (with NaN detection),
// the softmax denominator sum(exp(x - shift)) and the search for entries above a bound.
//
// Each kernel has a scalar reference (always compiled, used by tests as the oracle
// and on targets without SIMD) and a dispatching entry point that uses WebAssembly
// SIMD128 under __wasm_simd128__ or SSE2 under __SSE2__ natively.
#pragma once

#include <cstddef>

namespace tiankong {
namespace simd {

// Result of one scan over a logits row.
struct RowScan {
  float max = 0.0f;      // largest non-NaN value; -inf for an all -inf row, +inf if present
  bool has_nan = false;  // any NaN in the row
};

// Maximum and NaN flag of x[0..n). n == 0 gives {-inf, false}.
RowScan ScanRow(const float* x, size_t n);
RowScan ScanRowScalar(const float* x, size_t n);

// sum_i exp(x[i] - shift) for a finite shift >= every x[i] (so each term is in [0, 1]).
// -inf entries contribute 0. The SIMD version uses a polynomial exp (max relative
// error ~2e-7 per term) and accumulates lanes in double, so the relative error of
// the sum stays ~2e-7 regardless of n. The scalar reference uses std::exp and a
// double accumulator.
double SumExpShifted(const float* x, size_t n, float shift);
double SumExpShiftedScalar(const float* x, size_t n, float shift);

// Smallest i in [begin, n) with x[i] > bound, or n if none. The top-k selection uses
// it to skip, a vector at a time, the long runs that cannot enter the heap.
size_t FindFirstGreater(const float* x, size_t begin, size_t n, float bound);
size_t FindFirstGreaterScalar(const float* x, size_t begin, size_t n, float bound);

// Name of the SIMD path compiled in ("wasm-simd128", "sse2" or "scalar").
const char* KernelIsa();

}  // namespace simd
}  // namespace tiankong
