// CUDA implementations of ops in foresight/kernels/ops.h (kernels/src/cuda/
// <op>.cu). The dispatchers have checked dtypes, shapes and that every
// operand is on one CUDA device. A build without CUDA links
// kernels/src/no_cuda_ops.cc instead, whose functions return Unimplemented.
#pragma once

#include "foresight/kernels/ops.h"

namespace foresight::kernels::cuda {

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

// The graph lives on the GPU; seeds too. sink, drawn and ahead are
// CPU-pipeline features: with any of them set the op returns Unimplemented.
Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors, const Tensor* source_mask,
                       const SampleSink* sink, const SampledAhead* drawn, SampledAhead* ahead);

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
