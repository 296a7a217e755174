#include "order_util.h"

#include <string>
#include <utility>

namespace foresight::sampler::internal {

StatusOr<Tensor> CopyIdsToI64(const Tensor& ids, const char* who) {
  if (!ids.defined() || ids.dim() != 1 || !ids.device().is_cpu() ||
      (ids.dtype() != DType::kI32 && ids.dtype() != DType::kI64)) {
    return InvalidArgument(std::string(who) + ": train_ids: expected a 1-D i32 or i64 host tensor, got " +
                           (ids.defined() ? ids.ToString() : std::string("an undefined tensor")));
  }
  const int64_t n = ids.size(0);
  Tensor out = Tensor::Empty({n}, DType::kI64);
  int64_t* dst = out.data<int64_t>();
  // Strided views are allowed: copy element by element.
  const int64_t stride = ids.stride(0);
  if (ids.dtype() == DType::kI32) {
    const int32_t* src = ids.data<int32_t>();
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
  } else {
    const int64_t* src = ids.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
  }
  return out;
}

void Shuffle(int64_t* p, int64_t n, RngKey key) {
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(key.Below(static_cast<uint64_t>(i + 1), static_cast<uint64_t>(i), 0));
    std::swap(p[i], p[j]);
  }
}

}  // namespace foresight::sampler::internal
