// oneDNN's batched matmul primitive, timed: `count` independent products
// [m x k] x [k x n] (op(b) = b^T with trans_b) in one call, on an OpenMP
// team of `threads`. The floor benches take the DLRM interaction's tiny
// per-sample products at the better of this and one sgemm call a sample:
// oneDNN's sgemm pays a per-call cost that OpenBLAS did not (a 27 x 27 x 64
// product ran 4x slower through it), and a floor must not count a
// library's call overhead as work the step has to do.
#pragma once

#include <cstdint>

namespace foresight::bench {

// Best wall seconds of `reps` runs after one warm-up; < 0 when oneDNN
// refused the primitive (the reason on stderr).
double BestBatchedMatmulSeconds(int64_t count, int64_t m, int64_t n, int64_t k, bool trans_b, int threads, int reps);

}  // namespace foresight::bench
