// The compute ops of foresight. Each op checks its arguments, then dispatches
// on the device of its inputs (kernels/src/<op>.cc); kernels/src/cpu/<op>.cc
// is the fast CPU implementation and the reference for kernels/src/cuda/.
// Outputs are caller-allocated tensors of the documented shape on the same
// device (Tensor::EmptyOn); ops never resize them. All float math is f32.
// Results are bitwise identical for any thread count (fixed chunking).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/tensor.h"
#include "foresight/kernels/csr.h"

namespace foresight::kernels {

// ---- dense linear algebra ----

// c = alpha * op(a) @ op(b) + beta * c. f32, 2-D, row-major (any leading
// stride for a view of rows). BLAS runs single-threaded on fixed row blocks
// of c spread over ctx.pool. On CUDA, cuBLAS (f32; TF32 tensor cores when
// ctx.allow_tf32).
Status Gemm(const ExecContext& ctx, const Tensor& a, bool trans_a, const Tensor& b, bool trans_b,
            float alpha, float beta, Tensor* c);
// A Linear layer's forward: y = x @ w + bias, then ReLU when relu. x [N, K],
// w [K, M], bias [M], y [N, M] (not aliasing x or w). The same bits as Gemm
// (alpha 1, beta 0) then AddBias, or AddBiasRelu. The CPU adds the bias to
// each tile of y right after the tile's product, while it is in cache.
Status GemmBias(const ExecContext& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, bool relu, Tensor* y);
// The backward through a Linear layer into the ReLU below it, for
// y = relu(z) feeding that layer (z = x' w' + b' of the layer below):
// grad_z = y > 0 ? grad_y w^T : 0, and, when grad_bias is not null, the
// column sums of grad_z (the lower layer's bias gradient). grad_y [N, M],
// w [K, M], y and grad_z [N, K] contiguous (grad_z not aliasing the
// others), grad_bias [K]. The same bits as Gemm (grad_y, w^T, beta 0) then
// ReluBackwardSumRows. The CPU applies the mask (and sums the bias
// gradient) on each tile of the product while it is in cache.
Status GemmReluBackward(const ExecContext& ctx, const Tensor& grad_y, const Tensor& w, const Tensor& y,
                        Tensor* grad_z, Tensor* grad_bias);

// ---- rows ----

// out[i, :] = src[ids[i], :]. ids i32/i64; src f32/f16/bf16 (converted to the
// dtype of out, which is f32 or src's dtype). Errors name the first id out of
// range.
Status GatherRows(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* out);
// dst[ids[i], :] += src[i, :], deterministic for repeated ids (fixed order).
Status IndexAddRows(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* dst);

// ---- graph aggregation (SpMM over a Csr) ----

enum class Reduce { kSum, kMean, kMax };
const char* ReduceName(Reduce r);

// out[v, :] = reduce_{e in row v} w_e * x[indices[e], :]; w_e = edge_weight
// when defined (kSum only: weights with kMean/kMax are an error), else 1. Empty rows give 0. x [num_src, F],
// out [num_dst, F]. For kMax, argmax (i64 [num_dst, F], -1 for empty rows)
// receives the winning source id; pass null otherwise.
Status Spmm(const ExecContext& ctx, const Csr& csr, Reduce reduce, const Tensor& x, Tensor* out,
            Tensor* argmax);
// grad_x [num_src, F] = d out / d x applied to grad_out [num_dst, F]
// (overwritten, not accumulated). `csr_t` is TransposeCsr(csr) with its
// edge_perm (edge_perm may be undefined unless csr has edge weights); kMax
// uses argmax instead and ignores csr_t and edge_perm.
Status SpmmBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t, const Tensor& edge_perm,
                    Reduce reduce, const Tensor& grad_out, const Tensor& argmax, Tensor* grad_x);

// GCN normalisation of a block whose first num_dst sources are its
// destinations: adds a self loop to every destination that has none, and
// sets edge_weight = 1/sqrt(deg_in(dst) * deg_out(src)) with degrees counted
// in the result (Kipf & Welling). For a full graph num_src == num_dst.
// The op allocates out's tensors (same device and index dtype as csr); each
// row keeps its input edge order, an added self loop goes last in its row,
// and any input edge weights are replaced.
Status GcnNormalize(const ExecContext& ctx, const Csr& csr, Csr* out);
// The out-degree of every source in GcnNormalize(csr) (its edges plus the
// self loops GcnNormalize adds): i64 [num_src], allocated by the op.
Status GcnOutDegrees(const ExecContext& ctx, const Csr& csr, Tensor* out_degree);
// GcnNormalize with each source's out-degree given (i64 [num_src], values
// >= 1 for every source an edge of the result reads) instead of counted in
// `csr`: a chunk of a larger graph, holding all in-edges of its
// destinations, gets the larger graph's weights bit for bit when
// src_out_degree[i] is that graph's GcnOutDegrees of source i's node.
Status GcnNormalizeWithOutDegrees(const ExecContext& ctx, const Csr& csr, const Tensor& src_out_degree,
                                  Csr* out);

// ---- attention over edges (GAT) ----

// scores[e, h] = leaky_relu(el[src(e), h] + er[dst(e), h], slope).
// el [num_src, H], er [num_dst, H], scores [E, H].
Status GatEdgeScores(const ExecContext& ctx, const Csr& csr, const Tensor& el, const Tensor& er,
                     float slope, Tensor* scores);
// Given grad_scores [E, H], accumulates into grad_el / grad_er (overwritten).
Status GatEdgeScoresBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t,
                             const Tensor& edge_perm, const Tensor& el, const Tensor& er, float slope,
                             const Tensor& grad_scores, Tensor* grad_el, Tensor* grad_er);
// Softmax over each destination's incoming edges, per head: [E, H].
Status EdgeSoftmax(const ExecContext& ctx, const Csr& csr, const Tensor& scores, Tensor* out);
// grad_scores = out * (grad_out - sum_row(out * grad_out)).
Status EdgeSoftmaxBackward(const ExecContext& ctx, const Csr& csr, const Tensor& out,
                           const Tensor& grad_out, Tensor* grad_scores);
// out[v, h, :] = sum_e alpha[e, h] * x[src(e), h, :]; x [num_src, H, D],
// alpha [E, H], out [num_dst, H, D].
Status SpmmEdgeHeads(const ExecContext& ctx, const Csr& csr, const Tensor& alpha, const Tensor& x,
                     Tensor* out);
// Gradients of SpmmEdgeHeads w.r.t. alpha [E, H] and x [num_src, H, D]
// (both overwritten; either may be null to skip).
Status SpmmEdgeHeadsBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t,
                             const Tensor& edge_perm, const Tensor& alpha, const Tensor& x,
                             const Tensor& grad_out, Tensor* grad_alpha, Tensor* grad_x);

// ---- dense optimizer updates (f32, elementwise, in place) ----

// One parameter's tensors for a dense update: its value w (updated), its
// gradient g and the optimizer's state (s0: SGD's momentum buffer or
// Adam's first moment m; s1: Adam's second moment v; undefined where the
// optimizer keeps none), each contiguous f32 of w's shape, all on w's
// device. Tensors are shared handles: the update writes w, s0 and s1.
struct DenseUpdateTensors {
  Tensor w, g, s0, s1;
};

// Adam's step-dependent scalars, computed once per step by the caller
// (autograd/src/optim/adam.cc) so every device applies the same floats.
struct AdamUpdateArgs {
  float step_size = 0;   // lr / (1 - beta1^t)
  float bc2_sqrt = 1;    // sqrt(1 - beta2^t)
  float coupled_wd = 0;  // adam's L2 on the gradient (0 for adamw)
  float shrink = 1;      // adamw's 1 - lr * wd on the value (1 for adam)
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
};

// For every parameter, elementwise with explicit fused multiply-adds:
//   g' = fma(coupled_wd, w, g); m = fma(b1, m, (1 - b1) g');
//   v = fma(b2, v, (1 - b2) g' g'); w = fma(w, shrink, -(step_size m / (sqrt(v) / bc2_sqrt + eps))).
// The same bits on every device (IEEE division and square root). The CPU
// spreads all parameters' chunks over one pool loop.
Status AdamUpdate(const ExecContext& ctx, const AdamUpdateArgs& args, const std::vector<DenseUpdateTensors>& params);
// For every parameter: with momentum > 0, s0 = momentum * s0 + (g + wd * w)
// and w -= lr * s0; else w -= lr * (g + wd * w) (s0 unused).
Status SgdUpdate(const ExecContext& ctx, float lr, float weight_decay, float momentum,
                 const std::vector<DenseUpdateTensors>& params);

// ---- elementwise (f32, same shapes unless stated; out may alias an input) ----

Status Add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* out);
// out = a * alpha + b * beta
Status Axpby(const ExecContext& ctx, float alpha, const Tensor& a, float beta, const Tensor& b, Tensor* out);
Status Mul(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* out);
Status Scale(const ExecContext& ctx, const Tensor& a, float alpha, Tensor* out);
// out[i, :] = x[i, :] + bias (bias [F]).
Status AddBias(const ExecContext& ctx, const Tensor& x, const Tensor& bias, Tensor* out);
// grad_bias[f] = sum_i grad[i, f] (fixed order).
Status SumRows(const ExecContext& ctx, const Tensor& grad, Tensor* grad_bias);

enum class Activation { kRelu, kElu, kLeakyRelu };
Status Activate(const ExecContext& ctx, Activation act, float param, const Tensor& x, Tensor* out);
// grad_x from x (the forward input) and grad_out.
Status ActivateBackward(const ExecContext& ctx, Activation act, float param, const Tensor& x,
                        const Tensor& grad_out, Tensor* grad_x);

// A Linear layer's bias and ReLU in one pass over its product x [N, F]:
// out = relu(x + bias), the same bits as AddBias then Activate(kRelu) (out
// may be x).
Status AddBiasRelu(const ExecContext& ctx, const Tensor& x, const Tensor& bias, Tensor* out);
// The backward of y = relu(z + bias) in one pass: grad_z = y > 0 ? grad_y : 0
// (y > 0 exactly where z + bias > 0) and, when grad_bias is not null, its
// column sums. The same bits as ActivateBackward(kRelu) then SumRows.
Status ReluBackwardSumRows(const ExecContext& ctx, const Tensor& y, const Tensor& grad_y, Tensor* grad_z,
                           Tensor* grad_bias);

// Inverted dropout: keep with probability 1-p and scale by 1/(1-p). The keep
// decision for flat element i is ctx.rng.StreamUniform(i, 0) >= p, so it depends
// only on the key and the position (identical on every device). mask (u8,
// same numel) receives the decisions for backward.
Status Dropout(const ExecContext& ctx, float p, const Tensor& x, Tensor* out, Tensor* mask);
Status DropoutBackward(const ExecContext& ctx, float p, const Tensor& mask, const Tensor& grad_out,
                       Tensor* grad_x);

// ---- losses and metrics ----

// Row-wise log-softmax of logits [N, C].
Status LogSoftmax(const ExecContext& ctx, const Tensor& logits, Tensor* out);
Status LogSoftmaxBackward(const ExecContext& ctx, const Tensor& out, const Tensor& grad_out,
                          Tensor* grad_logits);
// Mean negative log-likelihood over rows whose label >= 0 (labels i32/i64
// [N]); a label >= C is an error naming the row. *loss is a host float.
// grad_logp (optional) receives d loss / d logp.
Status NllLoss(const ExecContext& ctx, const Tensor& logp, const Tensor& labels, float* loss,
               Tensor* grad_logp);
// Counts rows with label >= 0 and argmax(scores) == label (first max wins).
Status Accuracy(const ExecContext& ctx, const Tensor& scores, const Tensor& labels, int64_t* correct,
                int64_t* counted);

// ---- sampling ----

// Uniform neighbour sampling without replacement over `graph` (a full
// CSR-by-destination graph, indices i32/i64 global ids). For seed s with
// degree d it draws min(fanout, d) distinct in-neighbours (all of them when
// fanout < 0 or fanout >= d, in CSR order). Draw j of node s uses
// key.PairedBelow(.., s, j) (the caller folds seed, epoch, batch and hop
// into key), so the result is a function of (key, s) only: same on any
// device or thread count. Outputs: out_indptr i64 [num_seeds + 1] and
// out_neighbors i64 (allocated by the op, global ids, per seed in the order
// drawn; possibly a view of the start of a larger buffer).
//
// `source_mask` (optional; u8 [graph.num_src], on the graph's device)
// restricts the candidates: seed s's candidates are then the in-neighbours
// u with source_mask[u] != 0, in CSR order, and with c of them it draws
// min(fanout, c) of those (all of them, in CSR order, when fanout < 0 or
// fanout >= c) with the same keyed draws over [0, c) as above, the draw
// mapping to the t-th allowed neighbour. So an all-ones mask gives exactly
// the unmasked result. The mask says nothing about the seeds themselves.
// With a mask, an index outside [0, num_src) is an error naming its row.
// Cost: counting the allowed neighbours reads each seed's whole row, so a
// masked seed costs O(degree) where an unmasked one costs O(fanout).
//
// `sink` (optional) receives the sampled neighbours while the op is still
// running, and writes them into out_neighbors itself: it is called with
// `sampled`, the neighbours of entries [begin, end) of out_neighbors in
// order, and `neighbors` (out_neighbors' data), and must write
// neighbors[begin, end), for consecutive ranges in increasing order, each
// range once and only once it is final, always on the calling thread
// (between the chunks it samples itself, so a sink's working set stays in
// one core's caches). `sampled` lies in another buffer, or at or after
// neighbors + begin in the same one, where it may overlap the range: a
// sink that goes forward and reads sampled[j] before it writes
// neighbors[begin + j] is safe. A caller
// whose own pass over the output must go in order (the sampler's
// relabelling) then overlaps it with the rest of the sampling instead of
// following it, and writes its result straight into place. Its first
// error stops the calls and is the op's result. On return every entry has
// been passed to the sink.
using SampleSink =
    std::function<Status(const int64_t* sampled, int64_t* neighbors, int64_t begin, int64_t end)>;

// One hop's draws made ahead of its own call, during the call for the hop
// before (SampleNeighbors' `ahead`), over that call's seeds; the next call,
// whose first seeds they must be, takes them as `drawn`. The caller sets
// `fanout` and `key` (the next hop's) before the call that draws them and
// passes the object on untouched; the rest is the op's.
struct SampledAhead {
  int64_t fanout = 0;
  RngKey key;
  int64_t num_seeds = -1;      // the seeds drawn for; -1 until drawn
  Tensor neighbors;            // i64: the draws, chunk by chunk in slots
  Tensor ends;                 // i64 [num_seeds]: where each seed's draws end in its chunk's slot
  std::vector<int64_t> slot;   // chunk c's draws start at slot[c]
  std::vector<int64_t> total;  // and number total[c]
  std::vector<int64_t> bad;    // chunk c's first bad seed, or -1
};

// On CUDA (graph, seeds and mask on one GPU) the outputs are allocated on
// that GPU and hold the CPU's samples for the same key; sink, drawn and
// ahead are CPU pipeline features there (Unimplemented).
//
// `drawn` (optional) holds this hop's draws for seeds[0, drawn->num_seeds),
// made ahead with this fanout, key and mask: the op takes them instead of
// drawing those seeds again (the same result). `ahead` (optional) makes the
// next hop's draws for all of `seeds` in the same parallel loop, after this
// hop's chunks: threads that run out of this hop's work (while the calling
// thread is still relabelling it) draw the next hop meanwhile.
Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors,
                       const Tensor* source_mask = nullptr, const SampleSink* sink = nullptr,
                       const SampledAhead* drawn = nullptr, SampledAhead* ahead = nullptr);

// ---- embedding bags (many tables in one flat layout) ----
//
// Rows of every table live in one 2-D tensor `weights` [R, row_width] of
// dtype f32 or f16. A row holds the embedding (dim elements of the weights'
// dtype, padded to a multiple of 4 bytes) followed by its optimizer's state
// as f32 values (EmbeddingRowLayout), so the state moves, caches and
// checkpoints with the row. Table t owns rows [table_offsets[t],
// table_offsets[t+1]) and its ids are local to it; with table_offsets
// undefined the ids are rows of `weights` (a cache's slot array).
//
// A batch of B samples over T tables has T*B bags, table-major: bag
// t*B + b is sample b of table t and holds ids[offsets[t*B+b],
// offsets[t*B+b+1]) (offsets i64 [T*B + 1], non-decreasing, offsets[0] = 0,
// offsets[T*B] = ids.size(0)). The pooled output is f32 [B, T*dim]:
// columns [t*dim, (t+1)*dim) hold table t.

enum class Pooling { kSum, kMean };
const char* PoolingName(Pooling p);

enum class SparseOptimizer { kSgd, kRowwiseAdagrad, kAdam };
// "sgd", "rowwise-adagrad", "adam"; InvalidArgument naming the choices.
StatusOr<SparseOptimizer> ParseSparseOptimizer(const std::string& name);
const char* SparseOptimizerName(SparseOptimizer o);

// The fused update of one row with gradient g (the row's summed gradient):
//   sgd              w -= lr * g
//   rowwise-adagrad  s += mean_j(g_j^2);  w -= lr * g / (sqrt(s) + eps)
//                    (one f32 of state a row, as FBGEMM's)
//   adam             m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//                    w -= lr * (m / (1-b1^step)) / (sqrt(v / (1-b2^step)) + eps)
//                    (2*dim f32 of state; lazy: rows not in the batch keep
//                    their moments, as torch.optim.SparseAdam)
// weight_decay > 0 first adds weight_decay * w to g (L2).
struct SparseOptimizerConfig {
  SparseOptimizer kind = SparseOptimizer::kSgd;
  float lr = 0.01f;            // Default: 0.01
  float eps = 1e-8f;           // adagrad, adam. Default: 1e-8
  float beta1 = 0.9f;          // adam. Default: 0.9
  float beta2 = 0.999f;        // adam. Default: 0.999
  float weight_decay = 0.0f;   // Default: 0
  int64_t step = 1;            // adam: 1-based step of this update
};

// Where the parts of an embedding row are (elements of the weights dtype).
struct EmbeddingRowLayout {
  int64_t dim = 0;
  DType dtype = DType::kF32;  // f32 or f16
  SparseOptimizer optimizer = SparseOptimizer::kSgd;

  int64_t state_floats() const;   // f32 values of optimizer state a row
  int64_t state_offset() const;   // elements before the state (dim, padded to 4 bytes)
  int64_t row_width() const;      // elements a row (embedding + padding + state)
  int64_t row_bytes() const { return row_width() * static_cast<int64_t>(DTypeSize(dtype)); }
};
// InvalidArgument unless dim > 0 and dtype is f32 or f16.
Status ValidateEmbeddingRowLayout(const EmbeddingRowLayout& layout);

// out [B, T*dim] (f32) = pooled rows: sum (or mean, each bag divided by its
// length; an empty bag gives 0) of the embeddings of each bag's ids, each
// scaled by per_sample_weights[i] when defined (f32 [N], sum pooling only).
// B = out.size(0); T = (offsets.size(0) - 1) / B. An id out of its table's
// range is OutOfRange naming its position, bag and table.
Status EmbeddingBagForward(const ExecContext& ctx, const EmbeddingRowLayout& layout, const Tensor& weights,
                           const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                           const Tensor& per_sample_weights, Pooling pooling, Tensor* out);

// The backward of EmbeddingBagForward fused with the optimizer: for every
// distinct row the batch touched, its gradient (from grad_out [B, T*dim])
// is summed over its occurrences in ascending position of ids (a fixed
// order: exact and identical for any thread count or device, whatever the
// duplicates), then the row and its state in `weights` are updated once.
// Rows not in the batch are untouched. The optimizer in `config` must be the
// layout's.
Status EmbeddingBagBackwardUpdate(const ExecContext& ctx, const EmbeddingRowLayout& layout,
                                  const SparseOptimizerConfig& config, const Tensor& table_offsets,
                                  const Tensor& ids, const Tensor& offsets, const Tensor& per_sample_weights,
                                  Pooling pooling, const Tensor& grad_out, Tensor* weights);

// ---- recommendation models (DLRM) ----

// How the bottom MLP's output x [B, D] meets the pooled tables emb [B, T*E]:
//   dot  z_0 = x, z_k = table k-1's embedding (needs D == E); out
//        [B, D + (T+1)T/2] = [x, z_i . z_j for i > j], the pairs in the
//        order of the strictly lower triangle read row by row ((1,0), (2,0),
//        (2,1), (3,0), ...), as the reference DLRM;
//   cat  out [B, D + T*E] = [x, emb].
enum class Interaction { kDot, kCat };
// "dot", "cat"; InvalidArgument naming the choices.
StatusOr<Interaction> ParseInteraction(const std::string& name);
const char* InteractionName(Interaction i);
// Columns of the interaction's output.
int64_t InteractionWidth(Interaction kind, int64_t num_tables, int64_t x_dim, int64_t emb_dim);
Status FeatureInteraction(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                          const Tensor& emb, Tensor* out);
// Gradients of FeatureInteraction (overwritten, not accumulated): grad_x
// [B, D], grad_emb [B, T*E]; dot sums each z_k's terms in ascending j.
Status FeatureInteractionBackward(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                                  const Tensor& emb, const Tensor& grad_out, Tensor* grad_x, Tensor* grad_emb);

// Mean binary cross-entropy of sigmoid(logits) against targets in [0, 1]
// (f32, both N elements, any shape), in the stable form
// max(z, 0) - z y + log1p(exp(-|z|)), summed in f64 over fixed chunks.
// grad_logits (optional, logits' shape): (sigmoid(z) - y) / N.
Status BceWithLogits(const ExecContext& ctx, const Tensor& logits, const Tensor& targets, float* loss,
                     Tensor* grad_logits);

}  // namespace foresight::kernels
