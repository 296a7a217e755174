// The shape and pointers of one embedding-bag call, unpacked once from its
// tensors by the CPU and the CUDA implementation alike (pointers live on the
// call's device; the CUDA kernels take the struct by value). The dispatcher
// (kernels/src/embedding_bag.cc) has checked the tensors' shapes and dtypes.
#pragma once

#include <cstdint>

#include "foresight/core/macros.h"
#include "foresight/core/tensor.h"
#include "foresight/kernels/ops.h"

namespace foresight::kernels::internal {

struct EmbeddingBagArgs {
  int64_t batch = 0, tables = 0, dim = 0, row_width = 0, rows = 0, num_ids = 0;
  const int64_t* offsets = nullptr;        // [tables * batch + 1]
  const int64_t* table_offsets = nullptr;  // [tables + 1]; null: ids are rows of weights
  const float* psw = nullptr;              // per-sample weights, or null
  bool mean = false;                       // mean pooling (else sum)

  FS_HOST_DEVICE int64_t num_bags() const { return batch * tables; }
  // Table t's first row in weights, and its number of rows.
  FS_HOST_DEVICE int64_t base(int64_t t) const { return table_offsets != nullptr ? table_offsets[t] : 0; }
  FS_HOST_DEVICE int64_t limit(int64_t t) const {
    return table_offsets != nullptr ? table_offsets[t + 1] - table_offsets[t] : rows;
  }
};

// Reads the call's sizes from its tensors (pooled: [batch, tables * dim]).
inline EmbeddingBagArgs UnpackEmbeddingBagArgs(const EmbeddingRowLayout& layout, const Tensor& weights,
                                               const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                                               const Tensor& psw, Pooling pooling, const Tensor& pooled) {
  EmbeddingBagArgs a;
  a.batch = pooled.size(0);
  a.dim = layout.dim;
  a.tables = pooled.size(1) / layout.dim;
  a.row_width = layout.row_width();
  a.rows = weights.size(0);
  a.num_ids = ids.size(0);
  a.offsets = offsets.data<int64_t>();
  a.table_offsets = table_offsets.defined() ? table_offsets.data<int64_t>() : nullptr;
  a.psw = psw.defined() ? psw.data<float>() : nullptr;
  a.mean = pooling == Pooling::kMean;
  return a;
}

}  // namespace foresight::kernels::internal
