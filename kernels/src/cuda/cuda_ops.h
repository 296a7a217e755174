// CUDA implementations of ops in foresight/kernels/ops.h (kernels/src/cuda/
// <op>.cu). The dispatchers have checked dtypes, shapes and that every
// operand is on one CUDA device. A build without CUDA links
// kernels/src/no_cuda_ops.cc instead, whose functions return Unimplemented.
#pragma once

#include "foresight/kernels/ops.h"

namespace foresight::kernels::cuda {

Status EmbeddingBagForward(const ExecContext& ctx, const EmbeddingRowLayout& layout, const Tensor& weights,
                           const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                           const Tensor& per_sample_weights, Pooling pooling, Tensor* out);
Status EmbeddingBagBackwardUpdate(const ExecContext& ctx, const EmbeddingRowLayout& layout,
                                  const SparseOptimizerConfig& config, const Tensor& table_offsets,
                                  const Tensor& ids, const Tensor& offsets, const Tensor& per_sample_weights,
                                  Pooling pooling, const Tensor& grad_out, Tensor* weights);

Status FeatureInteraction(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                          const Tensor& emb, Tensor* out);
Status FeatureInteractionBackward(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                                  const Tensor& emb, const Tensor& grad_out, Tensor* grad_x, Tensor* grad_emb);
Status BceWithLogits(const ExecContext& ctx, const Tensor& logits, const Tensor& targets, float* loss,
                     Tensor* grad_logits);

}  // namespace foresight::kernels::cuda
