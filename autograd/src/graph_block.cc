#include "foresight/autograd/graph_block.h"

#include <algorithm>

#include "foresight/kernels/ops.h"

namespace foresight::autograd {

GraphBlock::GraphBlock(kernels::Csr csr, kernels::Csr gcn_normalized)
    : csr_(std::move(csr)), gcn_(std::make_unique<GraphBlock>(std::move(gcn_normalized))) {}

Tensor GraphBlock::SourceIds(int64_t n) const {
  if (!src_ids_.defined()) return Tensor();
  return src_ids_.Slice(0, 0, std::min(n, src_ids_.size(0)));  // a shorter one is refused by its user
}

StatusOr<const GraphBlock::Transposed*> GraphBlock::Transpose(const ExecContext& ctx) {
  if (transposed_ == nullptr) {
    auto t = std::make_unique<Transposed>();
    FS_RETURN_IF_ERROR(kernels::TransposeCsr(ctx, csr_, &t->csr, &t->edge_perm));
    transposed_ = std::move(t);
  }
  return transposed_.get();
}

StatusOr<GraphBlock*> GraphBlock::GcnNormalized(const ExecContext& ctx) {
  if (gcn_ == nullptr) {
    kernels::Csr normalized;
    FS_RETURN_IF_ERROR(kernels::GcnNormalize(ctx, csr_, &normalized));
    gcn_ = std::make_unique<GraphBlock>(std::move(normalized));
  }
  return gcn_.get();
}

}  // namespace foresight::autograd
