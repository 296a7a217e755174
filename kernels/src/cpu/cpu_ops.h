// CPU implementations of the ops in foresight/kernels/ops.h and csr.h. The
// dispatchers in kernels/src/<op>.cc have already checked dtypes, shapes and
// devices; these functions trust them. Every loop runs on ctx.pool with
// chunking that depends only on the problem size, so results are bitwise
// identical for any thread count.
#pragma once

#include <cstdint>

#include "foresight/kernels/ops.h"

namespace foresight::kernels::cpu {

// Grain of elementwise loops (elements per chunk).
constexpr int64_t kElementGrain = 16384;

// Rows per chunk so a chunk touches about kElementGrain elements.
inline int64_t RowGrain(int64_t row_elems) {
  const int64_t g = kElementGrain / (row_elems > 0 ? row_elems : 1);
  return g > 0 ? g : 1;
}

Status Gemm(const ExecContext& ctx, const Tensor& a, bool trans_a, const Tensor& b, bool trans_b,
            float alpha, float beta, Tensor* c);

Status GatherRows(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* out);
Status IndexAddRows(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* dst);

Status ValidateCsr(const Csr& csr, const char* what);
Status TransposeCsr(const ExecContext& ctx, const Csr& csr, Csr* out, Tensor* edge_perm);

Status Spmm(const ExecContext& ctx, const Csr& csr, Reduce reduce, const Tensor& x, Tensor* out,
            Tensor* argmax);
Status SpmmBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t, const Tensor& edge_perm,
                    Reduce reduce, const Tensor& grad_out, const Tensor& argmax, Tensor* grad_x);
Status GcnNormalize(const ExecContext& ctx, const Csr& csr, Csr* out);
Status GcnOutDegrees(const ExecContext& ctx, const Csr& csr, Tensor* out_degree);
Status GcnNormalizeWithOutDegrees(const ExecContext& ctx, const Csr& csr, const Tensor& src_out_degree,
                                  Csr* out);

Status GatEdgeScores(const ExecContext& ctx, const Csr& csr, const Tensor& el, const Tensor& er,
                     float slope, Tensor* scores);
Status GatEdgeScoresBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t,
                             const Tensor& edge_perm, const Tensor& el, const Tensor& er, float slope,
                             const Tensor& grad_scores, Tensor* grad_el, Tensor* grad_er);
Status EdgeSoftmax(const ExecContext& ctx, const Csr& csr, const Tensor& scores, Tensor* out);
Status EdgeSoftmaxBackward(const ExecContext& ctx, const Csr& csr, const Tensor& out,
                           const Tensor& grad_out, Tensor* grad_scores);
Status SpmmEdgeHeads(const ExecContext& ctx, const Csr& csr, const Tensor& alpha, const Tensor& x,
                     Tensor* out);
Status SpmmEdgeHeadsBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t,
                             const Tensor& edge_perm, const Tensor& alpha, const Tensor& x,
                             const Tensor& grad_out, Tensor* grad_alpha, Tensor* grad_x);

Status Add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* out);
Status Axpby(const ExecContext& ctx, float alpha, const Tensor& a, float beta, const Tensor& b, Tensor* out);
Status Mul(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* out);
Status Scale(const ExecContext& ctx, const Tensor& a, float alpha, Tensor* out);
Status AddBias(const ExecContext& ctx, const Tensor& x, const Tensor& bias, Tensor* out);
Status SumRows(const ExecContext& ctx, const Tensor& grad, Tensor* grad_bias);

Status Activate(const ExecContext& ctx, Activation act, float param, const Tensor& x, Tensor* out);
Status ActivateBackward(const ExecContext& ctx, Activation act, float param, const Tensor& x,
                        const Tensor& grad_out, Tensor* grad_x);

Status Dropout(const ExecContext& ctx, float p, const Tensor& x, Tensor* out, Tensor* mask);
Status DropoutBackward(const ExecContext& ctx, float p, const Tensor& mask, const Tensor& grad_out,
                       Tensor* grad_x);

Status LogSoftmax(const ExecContext& ctx, const Tensor& logits, Tensor* out);
Status LogSoftmaxBackward(const ExecContext& ctx, const Tensor& out, const Tensor& grad_out,
                          Tensor* grad_logits);
Status NllLoss(const ExecContext& ctx, const Tensor& logp, const Tensor& labels, float* loss,
               Tensor* grad_logp);
Status Accuracy(const ExecContext& ctx, const Tensor& scores, const Tensor& labels, int64_t* correct,
                int64_t* counted);

Status EmbeddingBagForward(const ExecContext& ctx, const EmbeddingRowLayout& layout, const Tensor& weights,
                           const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                           const Tensor& per_sample_weights, Pooling pooling, Tensor* out);
Status EmbeddingBagBackwardUpdate(const ExecContext& ctx, const EmbeddingRowLayout& layout,
                                  const SparseOptimizerConfig& config, const Tensor& table_offsets,
                                  const Tensor& ids, const Tensor& offsets, const Tensor& per_sample_weights,
                                  Pooling pooling, const Tensor& grad_out, Tensor* weights);

// Calls fn(I{}) with I = int32_t or int64_t, the element type of an index
// tensor (the dispatchers have checked it is one of the two).
template <typename Fn>
auto WithIndexType(DType t, Fn&& fn) {
  if (t == DType::kI32) return fn(int32_t{});
  return fn(int64_t{});
}

// Destination rows per chunk for a graph op touching `per_edge` floats per
// edge: about 4 * kElementGrain floats of work per chunk. Depends only on
// the shapes, never on the thread count.
inline int64_t DstGrain(int64_t num_dst, int64_t num_edges, int64_t per_edge) {
  const int64_t avg = num_dst > 0 ? num_edges / num_dst : 0;
  const int64_t g = 4 * kElementGrain / ((per_edge > 0 ? per_edge : 1) * (1 + avg));
  return g > 0 ? g : 1;
}

Status FeatureInteraction(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                          const Tensor& emb, Tensor* out);
Status FeatureInteractionBackward(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                                  const Tensor& emb, const Tensor& grad_out, Tensor* grad_x, Tensor* grad_emb);
Status BceWithLogits(const ExecContext& ctx, const Tensor& logits, const Tensor& targets, float* loss,
                     Tensor* grad_logits);

}  // namespace foresight::kernels::cpu
