#include "sgemm.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <string>

namespace foresight::kernels::cpu {

namespace {

// Debian builds oneDNN on OpenMP: a call runs on an OpenMP team of the
// calling thread's nthreads-var, every core by default, and each of the
// pool's threads would start its own team. One thread a call instead; the
// ICV belongs to the calling thread, so each thread sets it once.
void OneOpenMpThreadHere() {
  thread_local const bool set = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)set;
}

}  // namespace

void SgemmCalls::Run(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                     int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  OneOpenMpThreadHere();
  const dnnl_status_t code =
      dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  int none = 0;
  if (code != dnnl_success && failed_.compare_exchange_strong(none, static_cast<int>(code))) {
    m_ = m;
    n_ = n;
    k_ = k;
  }
}

Status SgemmCalls::status(const char* op) const {
  const int code = failed_.load();
  if (code == 0) return Status::OK();
  const std::string what = std::string(op) + ": oneDNN's sgemm failed on a [" + std::to_string(m_) + " x " +
                           std::to_string(k_) + "] x [" + std::to_string(k_) + " x " + std::to_string(n_) +
                           "] product: " + dnnl_status2str(static_cast<dnnl_status_t>(code));
  return code == dnnl_out_of_memory ? ResourceExhausted(what) : Internal(what);
}

}  // namespace foresight::kernels::cpu
