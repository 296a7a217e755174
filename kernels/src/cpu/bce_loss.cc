// Binary cross-entropy with logits on the CPU. The loss of one element is
// max(z, 0) - z y + log1p(exp(-|z|)): never exp of a large positive number,
// and exact for |z| large where log(sigmoid(z)) would round to 0 or -inf.
// The mean is summed in f64 over fixed chunks, combined in chunk order.
#include <cmath>
#include <vector>

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {
constexpr int64_t kBceGrain = 4096;
}  // namespace

Status BceWithLogits(const ExecContext& ctx, const Tensor& logits, const Tensor& targets, float* loss,
                     Tensor* grad_logits) {
  const int64_t n = logits.numel();
  const float* pz = logits.data<float>();
  const float* py = targets.data<float>();
  float* pg = grad_logits != nullptr ? grad_logits->data<float>() : nullptr;
  const float inv_n = n > 0 ? 1.0f / static_cast<float>(n) : 0.0f;
  std::vector<double> partial(static_cast<size_t>(ThreadPool::NumChunks(n, kBceGrain)), 0.0);
  ctx.pool->ParallelForChunks(n, kBceGrain, [&](int64_t chunk, int64_t i0, int64_t i1) {
    double s = 0.0;
    for (int64_t i = i0; i < i1; ++i) {
      const float z = pz[i], y = py[i];
      s += static_cast<double>(std::fmax(z, 0.0f) - z * y + std::log1p(std::exp(-std::fabs(z))));
      if (pg != nullptr) {
        // sigmoid without overflow: for z < 0, e^z / (1 + e^z).
        const float ez = std::exp(-std::fabs(z));
        const float sig = z >= 0 ? 1.0f / (1.0f + ez) : ez / (1.0f + ez);
        pg[i] = (sig - y) * inv_n;
      }
    }
    partial[chunk] = s;
  });
  double total = 0.0;
  for (double s : partial) total += s;
  *loss = n > 0 ? static_cast<float>(total / static_cast<double>(n)) : 0.0f;
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
