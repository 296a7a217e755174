#include "rank_share_order.h"

namespace foresight::trainer::internal {

Tensor RankShareOrder::Batch(int64_t epoch, int64_t b) const {
  Tensor all = global_->Batch(epoch, b);
  if (!all.defined()) return all;
  const int64_t n = all.numel();
  return all.Slice(0, n * rank_ / ranks_, n * (rank_ + 1) / ranks_);
}

}  // namespace foresight::trainer::internal
