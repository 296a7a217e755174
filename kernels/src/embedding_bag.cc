// EmbeddingBagForward / EmbeddingBagBackwardUpdate: argument checks and the
// device dispatch. Values (offsets non-decreasing, ids in range) are checked
// by the implementations, which read them anyway.
#include <cmath>
#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

const char* PoolingName(Pooling p) { return p == Pooling::kSum ? "sum" : "mean"; }

StatusOr<SparseOptimizer> ParseSparseOptimizer(const std::string& name) {
  if (name == "sgd") return SparseOptimizer::kSgd;
  if (name == "rowwise-adagrad") return SparseOptimizer::kRowwiseAdagrad;
  if (name == "adam") return SparseOptimizer::kAdam;
  return InvalidArgument("unknown sparse optimizer '" + name + "' (expected sgd, rowwise-adagrad or adam)");
}

const char* SparseOptimizerName(SparseOptimizer o) {
  switch (o) {
    case SparseOptimizer::kSgd: return "sgd";
    case SparseOptimizer::kRowwiseAdagrad: return "rowwise-adagrad";
    case SparseOptimizer::kAdam: return "adam";
  }
  return "?";
}

int64_t EmbeddingRowLayout::state_floats() const {
  switch (optimizer) {
    case SparseOptimizer::kSgd: return 0;
    case SparseOptimizer::kRowwiseAdagrad: return 1;
    case SparseOptimizer::kAdam: return 2 * dim;
  }
  return 0;
}

int64_t EmbeddingRowLayout::state_offset() const {
  const int64_t es = static_cast<int64_t>(DTypeSize(dtype));
  const int64_t bytes = (dim * es + 3) / 4 * 4;  // f32 state starts 4-byte aligned
  return bytes / es;
}

int64_t EmbeddingRowLayout::row_width() const {
  const int64_t es = static_cast<int64_t>(DTypeSize(dtype));
  return state_offset() + state_floats() * 4 / es;
}

Status ValidateEmbeddingRowLayout(const EmbeddingRowLayout& layout) {
  if (layout.dim <= 0) {
    return InvalidArgument("embedding row layout: dim must be positive, got " + std::to_string(layout.dim));
  }
  if (layout.dtype != DType::kF32 && layout.dtype != DType::kF16) {
    return InvalidArgument(std::string("embedding row layout: weights dtype must be f32 or f16, got ") +
                           DTypeName(layout.dtype));
  }
  return Status::OK();
}

namespace {

// The checks both ops share. `pooled` is out (forward) or grad_out
// (backward), f32 [B, T*dim].
Status CheckBagArgs(const char* op, const EmbeddingRowLayout& layout, const Tensor& weights,
                    const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                    const Tensor& per_sample_weights, Pooling pooling, const Tensor& pooled,
                    const char* pooled_name) {
  const std::string o(op);
  FS_RETURN_IF_ERROR(ValidateEmbeddingRowLayout(layout));
  FS_RETURN_IF_ERROR(CheckDefined(weights, (o + ": weights").c_str()));
  FS_RETURN_IF_ERROR(CheckDType(weights, layout.dtype, (o + ": weights").c_str()));
  FS_RETURN_IF_ERROR(CheckDim(weights, 2, (o + ": weights").c_str()));
  FS_RETURN_IF_ERROR(CheckContiguous(weights, (o + ": weights").c_str()));
  if (weights.size(1) != layout.row_width()) {
    return InvalidArgument(o + ": weights: expected rows of " + std::to_string(layout.row_width()) +
                           " elements (dim " + std::to_string(layout.dim) + " with " +
                           SparseOptimizerName(layout.optimizer) + " state), got " +
                           ShapeToString(weights.shape()));
  }
  FS_RETURN_IF_ERROR(internal::CheckIds(ids, (o + ": ids").c_str()));
  const std::string pn = o + ": " + pooled_name;
  FS_RETURN_IF_ERROR(CheckDefined(pooled, pn.c_str()));
  FS_RETURN_IF_ERROR(internal::CheckF32(pooled, pn.c_str()));
  FS_RETURN_IF_ERROR(CheckDim(pooled, 2, pn.c_str()));
  if (pooled.size(1) % layout.dim != 0 || pooled.size(1) == 0) {
    return InvalidArgument(pn + ": expected [B, T*dim] with dim " + std::to_string(layout.dim) + ", got " +
                           ShapeToString(pooled.shape()));
  }
  const int64_t batch = pooled.size(0);
  const int64_t tables = pooled.size(1) / layout.dim;
  FS_RETURN_IF_ERROR(CheckDType(offsets, DType::kI64, (o + ": offsets").c_str()));
  FS_RETURN_IF_ERROR(CheckDim(offsets, 1, (o + ": offsets").c_str()));
  FS_RETURN_IF_ERROR(CheckContiguous(offsets, (o + ": offsets").c_str()));
  if (offsets.size(0) != tables * batch + 1) {
    return InvalidArgument(o + ": offsets: expected " + std::to_string(tables * batch + 1) + " values (" +
                           std::to_string(tables) + " tables x " + std::to_string(batch) +
                           " samples + 1), got " + std::to_string(offsets.size(0)));
  }
  if (table_offsets.defined()) {
    FS_RETURN_IF_ERROR(CheckDType(table_offsets, DType::kI64, (o + ": table_offsets").c_str()));
    FS_RETURN_IF_ERROR(CheckShape(table_offsets, {tables + 1}, (o + ": table_offsets").c_str()));
    FS_RETURN_IF_ERROR(CheckContiguous(table_offsets, (o + ": table_offsets").c_str()));
  }
  if (per_sample_weights.defined()) {
    if (pooling != Pooling::kSum) {
      return InvalidArgument(o + ": per_sample_weights need sum pooling, got " + PoolingName(pooling));
    }
    FS_RETURN_IF_ERROR(
        internal::CheckF32Shape(per_sample_weights, {ids.size(0)}, (o + ": per_sample_weights").c_str()));
  }
  return internal::CheckOnDevice(weights.device(), {&table_offsets, &ids, &offsets, &per_sample_weights, &pooled},
                                 op);
}

}  // namespace

Status EmbeddingBagForward(const ExecContext& ctx, const EmbeddingRowLayout& layout, const Tensor& weights,
                           const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                           const Tensor& per_sample_weights, Pooling pooling, Tensor* out) {
  if (out == nullptr) return InvalidArgument("EmbeddingBagForward: out is null");
  FS_RETURN_IF_ERROR(CheckBagArgs("EmbeddingBagForward", layout, weights, table_offsets, ids, offsets,
                                  per_sample_weights, pooling, *out, "out"));
  if (weights.device().is_cpu()) {
    return cpu::EmbeddingBagForward(ctx, layout, weights, table_offsets, ids, offsets, per_sample_weights, pooling,
                                    out);
  }
  return cuda::EmbeddingBagForward(ctx, layout, weights, table_offsets, ids, offsets, per_sample_weights, pooling,
                                   out);
}

Status EmbeddingBagBackwardUpdate(const ExecContext& ctx, const EmbeddingRowLayout& layout,
                                  const SparseOptimizerConfig& config, const Tensor& table_offsets,
                                  const Tensor& ids, const Tensor& offsets, const Tensor& per_sample_weights,
                                  Pooling pooling, const Tensor& grad_out, Tensor* weights) {
  if (weights == nullptr) return InvalidArgument("EmbeddingBagBackwardUpdate: weights is null");
  FS_RETURN_IF_ERROR(CheckBagArgs("EmbeddingBagBackwardUpdate", layout, *weights, table_offsets, ids, offsets,
                                  per_sample_weights, pooling, grad_out, "grad_out"));
  if (config.kind != layout.optimizer) {
    return InvalidArgument(std::string("EmbeddingBagBackwardUpdate: the optimizer is ") +
                           SparseOptimizerName(config.kind) + " but the rows hold " +
                           SparseOptimizerName(layout.optimizer) + " state");
  }
  if (!std::isfinite(config.lr) || !std::isfinite(config.weight_decay) || config.weight_decay < 0) {
    return InvalidArgument("EmbeddingBagBackwardUpdate: lr and weight_decay must be finite (weight_decay >= 0)");
  }
  if (config.kind != SparseOptimizer::kSgd && !(config.eps > 0)) {
    return InvalidArgument("EmbeddingBagBackwardUpdate: eps must be positive, got " + std::to_string(config.eps));
  }
  if (config.kind == SparseOptimizer::kAdam) {
    if (config.step < 1) {
      return InvalidArgument("EmbeddingBagBackwardUpdate: adam step must be >= 1, got " +
                             std::to_string(config.step));
    }
    if (!(config.beta1 >= 0 && config.beta1 < 1 && config.beta2 >= 0 && config.beta2 < 1)) {
      return InvalidArgument("EmbeddingBagBackwardUpdate: adam betas must lie in [0, 1)");
    }
  }
  if (weights->device().is_cpu()) {
    return cpu::EmbeddingBagBackwardUpdate(ctx, layout, config, table_offsets, ids, offsets, per_sample_weights,
                                           pooling, grad_out, weights);
  }
  return cuda::EmbeddingBagBackwardUpdate(ctx, layout, config, table_offsets, ids, offsets, per_sample_weights,
                                          pooling, grad_out, weights);
}

}  // namespace foresight::kernels
