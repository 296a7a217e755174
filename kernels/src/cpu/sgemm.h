// The CPU kernels' one call into a BLAS: oneDNN's sgemm, row-major,
// c = alpha * op(a) op(b) + beta * c, on the calling thread alone (callers
// spread tiles of c over their ExecContext's pool). oneDNN's JIT kernels
// ran 1.07-1.8x OpenBLAS 0.3.21's AVX-512 ones at the GNN and DLRM step
// shapes on this project's machines (bench/RESULTS.md, session 17).
#pragma once

#include <atomic>
#include <cstdint>

#include "foresight/core/status.h"

namespace foresight::kernels::cpu {

// The sgemm calls of one op, from any of the pool's threads. A call fails
// only when oneDNN cannot allocate its packed panels (the ops check every
// argument first); the first failure is kept for the op's Status.
class SgemmCalls {
 public:
  // beta == 0 overwrites c, NaNs included.
  void Run(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
  // OK, or the first failure with `op` and its product's shape: ResourceExhausted
  // when oneDNN ran out of memory, Internal otherwise. Read after the calls.
  Status status(const char* op) const;

 private:
  std::atomic<int> failed_{0};  // oneDNN's status of the first failed call
  int64_t m_ = 0, n_ = 0, k_ = 0;  // its shape, written by that call only
};

}  // namespace foresight::kernels::cpu
