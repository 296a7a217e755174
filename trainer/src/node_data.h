// The arrays node classification reads from a dataset, in the forms the
// kernels take. Private to the trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "foresight/core/context.h"
#include "foresight/core/tensor.h"
#include "foresight/kernels/csr.h"
#include "foresight/storage/dataset.h"

namespace foresight::trainer::internal {

struct NodeData {
  std::unique_ptr<storage::Dataset> dataset;
  kernels::Csr graph;  // the whole graph by destination, num_src = N
};

// Opens and validates the dataset; checks it has labels and classes.
Status OpenNodeData(const std::string& dir, NodeData* out);

// The features as f32: the (mmap'd) tensor itself when it already is, else
// a converted copy.
StatusOr<Tensor> FeaturesAsF32(const ExecContext& ctx, const Tensor& features);
// i64 [ids.numel()]: labels[ids[i]]. labels i32/i64, ids i64 (checked).
StatusOr<Tensor> GatherLabels(const Tensor& labels, const Tensor& ids);
// i64 [N]: labels at `ids`, -1 elsewhere (loss and accuracy on a split of a
// whole-graph forward).
StatusOr<Tensor> MaskedLabels(const Tensor& labels, const Tensor& ids);
// `t` on `device`: t itself when it is there already (or undefined), else a
// copy. What a run on a GPU copies there (features, labels, blocks).
StatusOr<Tensor> OnDevice(const Tensor& t, Device device);
// The arrays of `csr` (indptr, indices, edge weights) moved to `device`.
Status CsrOnDevice(Device device, kernels::Csr* csr);
// The one value of a one-element f32 tensor on any device (a loss).
StatusOr<float> HostScalar(const Tensor& t);

// i64 [end - begin]: begin, begin+1, ...
Tensor IdRange(int64_t begin, int64_t end);
// i64: a followed by b.
Tensor ConcatIds(const Tensor& a, const Tensor& b);

}  // namespace foresight::trainer::internal
