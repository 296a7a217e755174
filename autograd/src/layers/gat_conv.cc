#include <algorithm>

#include "../internal.h"
#include "foresight/autograd/layers.h"
#include "foresight/kernels/keyed_dropout.h"

namespace foresight::autograd {

using internal::EmptyF32;

GATConv::GATConv(const std::string& name, int64_t in, int64_t out, int heads, bool concat,
                 float negative_slope, float attn_dropout, RngKey init)
    : Module(name),
      out_(std::max<int64_t>(out, 0)),
      heads_(std::max(heads, 0)),
      concat_(concat),
      slope_(negative_slope),
      attn_dropout_(attn_dropout) {
  // Negative sizes are clamped so construction cannot fail; Forward rejects
  // them. Attention vectors are [heads, out] matrices for Glorot's fans
  // (as PyG/DGL initialise theirs), without a gain.
  in = std::max<int64_t>(in, 0);
  const int64_t width = heads_ * out_;
  weight_ = AddParameter("weight", GlorotUniform({in, width}, in, width, init.Fold(0)));
  attn_src_ = AddParameter("attn_src", GlorotUniform({heads_, out_}, out_, heads_, init.Fold(1)));
  attn_dst_ = AddParameter("attn_dst", GlorotUniform({heads_, out_}, out_, heads_, init.Fold(2)));
  bias_ = AddParameter("bias", Tensor::Zeros({out_features()}, DType::kF32));
}

namespace {

// el[:, k] = h[:, k, :] . a[k, :] for every head k, one Gemm per head over
// strided views (h [n, H*D], a [H, D], el [n, H]).
Status HeadDots(const ExecContext& ctx, const Tensor& h, const Tensor& a, int64_t heads, int64_t d,
                Tensor* el) {
  for (int64_t k = 0; k < heads; ++k) {
    Tensor col = el->Slice(1, k, k + 1);
    FS_RETURN_IF_ERROR(kernels::Gemm(ctx, h.Slice(1, k * d, (k + 1) * d), false, a.Slice(0, k, k + 1), true,
                                     1.0f, 0.0f, &col));
  }
  return Status::OK();
}

// Backward of HeadDots: gh [n, H*D] += gel[:, k] a[k, :] per head, and
// ga [H, D] = beta * ga + gel^T h per head.
Status HeadDotsBackward(const ExecContext& ctx, const Tensor& h, const Tensor& a, const Tensor& gel,
                        int64_t heads, int64_t d, Tensor* gh, Tensor* ga, float ga_beta) {
  for (int64_t k = 0; k < heads; ++k) {
    const Tensor g_col = gel.Slice(1, k, k + 1);
    if (gh != nullptr) {
      Tensor gh_k = gh->Slice(1, k * d, (k + 1) * d);
      FS_RETURN_IF_ERROR(kernels::Gemm(ctx, g_col, false, a.Slice(0, k, k + 1), false, 1.0f, 1.0f, &gh_k));
    }
    if (ga != nullptr) {
      Tensor ga_k = ga->Slice(0, k, k + 1);
      FS_RETURN_IF_ERROR(
          kernels::Gemm(ctx, g_col, true, h.Slice(1, k * d, (k + 1) * d), false, 1.0f, ga_beta, &ga_k));
    }
  }
  return Status::OK();
}

// The mean over heads is a segment mean: row v of this Csr lists rows
// v*H .. v*H+H-1 of out viewed as [num_dst*H, D].
StatusOr<kernels::Csr> HeadMeanCsr(int64_t num_dst, int64_t heads, Device device) {
  Tensor indptr = Tensor::Empty({num_dst + 1}, DType::kI64);
  Tensor indices = Tensor::Empty({num_dst * heads}, DType::kI64);
  int64_t* p = indptr.data<int64_t>();
  int64_t* q = indices.data<int64_t>();
  for (int64_t v = 0; v <= num_dst; ++v) p[v] = v * heads;
  for (int64_t i = 0; i < num_dst * heads; ++i) q[i] = i;
  kernels::Csr csr;
  FS_ASSIGN_OR_RETURN(csr.indptr, indptr.To(device));
  FS_ASSIGN_OR_RETURN(csr.indices, indices.To(device));
  csr.num_src = num_dst * heads;
  return csr;
}

struct GatSaved {
  kernels::Csr csr, csr_t;  // the self-looped block (no edge weights) and its transpose
  Tensor perm;
  kernels::Csr mean_csr, mean_csr_t;  // head mean (concat=false, H > 1)
  Tensor mean_perm;
  Tensor el, er, alpha, alpha_used, mask;
  int64_t heads = 0, d = 0;
  float slope = 0.2f, p = 0.0f;
};

}  // namespace

StatusOr<Var> GATConv::Forward(Tape& tape, GraphBlock& block, const Var& x) {
  const std::string op = "GATConv " + name();
  FS_RETURN_IF_ERROR(internal::CheckMatrix(x, op, "input"));
  const Tensor& w = weight_->value();
  if (heads_ <= 0 || out_ <= 0 || w.size(0) <= 0) {
    return InvalidArgument(op + ": heads, in and out features must be positive, got weight " +
                           ShapeToString(w.shape()) + " with " + std::to_string(heads_) + " heads");
  }
  if (!(attn_dropout_ >= 0.0f && attn_dropout_ < 1.0f)) {
    return InvalidArgument(op + ": attn_dropout must be in [0, 1), got " + std::to_string(attn_dropout_));
  }
  const int64_t num_src = block.num_src(), num_dst = block.num_dst();
  if (x.shape()[0] != num_src || x.shape()[1] != w.size(0) || num_dst > num_src) {
    return InvalidArgument(op + ": input " + ShapeToString(x.shape()) + " for a block with " +
                           std::to_string(num_src) + " sources and " + std::to_string(num_dst) +
                           " destinations and weight " + ShapeToString(w.shape()));
  }
  const ExecContext& ctx = tape.ctx();
  // GCN normalisation adds the missing self loops; its weights are unused.
  FS_ASSIGN_OR_RETURN(GraphBlock * looped, block.GcnNormalized(ctx));
  FS_ASSIGN_OR_RETURN(Var h, MatMul(tape, x, weight_->var()));

  auto s = std::make_shared<GatSaved>();
  s->heads = heads_;
  s->d = out_;
  s->slope = slope_;
  s->csr = looped->csr();
  s->csr.edge_weight = Tensor();
  const int64_t heads = heads_, d = out_, edges = s->csr.num_edges();
  const Device device = x.value().device();
  const Tensor& hv = h.value();  // [num_src, H*D]

  FS_ASSIGN_OR_RETURN(s->el, EmptyF32(device, {num_src, heads}));
  FS_ASSIGN_OR_RETURN(s->er, EmptyF32(device, {num_dst, heads}));
  FS_RETURN_IF_ERROR(HeadDots(ctx, hv, attn_src_->value(), heads, d, &s->el));
  FS_RETURN_IF_ERROR(HeadDots(ctx, hv.Slice(0, 0, num_dst), attn_dst_->value(), heads, d, &s->er));
  FS_ASSIGN_OR_RETURN(Tensor scores, EmptyF32(device, {edges, heads}));
  FS_RETURN_IF_ERROR(kernels::GatEdgeScores(ctx, s->csr, s->el, s->er, slope_, &scores));
  FS_ASSIGN_OR_RETURN(s->alpha, EmptyF32(device, {edges, heads}));
  FS_RETURN_IF_ERROR(kernels::EdgeSoftmax(ctx, s->csr, scores, &s->alpha));
  s->alpha_used = s->alpha;
  if (tape.training() && attn_dropout_ > 0.0f) {
    s->p = attn_dropout_;
    FS_ASSIGN_OR_RETURN(s->alpha_used, EmptyF32(device, {edges, heads}));
    FS_ASSIGN_OR_RETURN(s->mask, Tensor::EmptyOn(device, {edges, heads}, DType::kU8));
    const ExecContext dctx = ctx.WithRng(tape.NextRngKey());
    if (block.src_ids().defined()) {
      // Keyed by each edge's global ends, so a rank's part of a batch draws
      // the one-rank decisions for its edges.
      Tensor ids = block.SourceIds(num_src);
      if (ids.device() != device) {
        FS_ASSIGN_OR_RETURN(ids, ids.To(device));
      }
      Tensor keys;
      FS_RETURN_IF_ERROR(kernels::DropoutEdgeKeys(ctx, s->csr, ids, &keys));
      FS_RETURN_IF_ERROR(kernels::DropoutRows(dctx, s->p, s->alpha, keys, &s->alpha_used, &s->mask));
    } else {
      FS_RETURN_IF_ERROR(kernels::Dropout(dctx, s->p, s->alpha, &s->alpha_used, &s->mask));
    }
  }
  FS_ASSIGN_OR_RETURN(Tensor h3, hv.Reshape({num_src, heads, d}));
  FS_ASSIGN_OR_RETURN(Tensor out3, EmptyF32(device, {num_dst, heads, d}));
  FS_RETURN_IF_ERROR(kernels::SpmmEdgeHeads(ctx, s->csr, s->alpha_used, h3, &out3));

  const bool head_mean = !concat_ && heads > 1;
  Tensor y;
  if (head_mean) {
    FS_ASSIGN_OR_RETURN(s->mean_csr, HeadMeanCsr(num_dst, heads, device));
    FS_ASSIGN_OR_RETURN(y, EmptyF32(device, {num_dst, d}));
    FS_ASSIGN_OR_RETURN(Tensor flat, out3.Reshape({num_dst * heads, d}));
    FS_RETURN_IF_ERROR(kernels::Spmm(ctx, s->mean_csr, kernels::Reduce::kMean, flat, &y, nullptr));
  } else {
    FS_ASSIGN_OR_RETURN(y, out3.Reshape({num_dst, out_features()}));
  }
  FS_RETURN_IF_ERROR(kernels::AddBias(ctx, y, bias_->value(), &y));

  const std::vector<Var> inputs{h, attn_src_->var(), attn_dst_->var(), bias_->var()};
  const bool recorded = tape.recording() && std::any_of(inputs.begin(), inputs.end(),
                                                       [](const Var& v) { return v.requires_grad(); });
  if (!recorded) return Var(y);
  // Transposes are taken now and held by value so the backward does not
  // depend on the block outliving the tape.
  FS_ASSIGN_OR_RETURN(const GraphBlock::Transposed* t, looped->Transpose(ctx));
  s->csr_t = t->csr;
  s->csr_t.edge_weight = Tensor();
  s->perm = t->edge_perm;
  if (head_mean) {
    FS_RETURN_IF_ERROR(kernels::TransposeCsr(ctx, s->mean_csr, &s->mean_csr_t, &s->mean_perm));
  }

  const Var a_src = attn_src_->var(), a_dst = attn_dst_->var(), bias = bias_->var();
  return tape.RecordGrad(inputs, y, [s, h, a_src, a_dst, bias, head_mean, num_src, num_dst](
                                        const ExecContext& ctx, const Tensor& gy) -> Status {
    const int64_t heads = s->heads, d = s->d, edges = s->csr.num_edges();
    const Device device = gy.device();
    if (bias.requires_grad()) {
      FS_RETURN_IF_ERROR(
          internal::AccumulateWith(ctx, bias, [&](Tensor* gb) { return kernels::SumRows(ctx, gy, gb); }));
    }
    const bool need_h = h.requires_grad();
    const bool need_attn = need_h || a_src.requires_grad() || a_dst.requires_grad();
    if (!need_attn) return Status::OK();

    // d out3 [num_dst, H, D].
    Tensor g_out3;
    if (head_mean) {
      FS_ASSIGN_OR_RETURN(g_out3, EmptyF32(device, {num_dst * heads, d}));
      FS_RETURN_IF_ERROR(kernels::SpmmBackward(ctx, s->mean_csr, s->mean_csr_t, s->mean_perm,
                                               kernels::Reduce::kMean, gy, Tensor(), &g_out3));
      FS_ASSIGN_OR_RETURN(g_out3, g_out3.Reshape({num_dst, heads, d}));
    } else {
      FS_ASSIGN_OR_RETURN(g_out3, gy.Reshape({num_dst, heads, d}));
    }

    // Through the aggregation: d alpha_used, and the direct part of d h.
    const Tensor& hv = h.value();
    FS_ASSIGN_OR_RETURN(Tensor h3, hv.Reshape({num_src, heads, d}));
    const bool fresh_h = need_h && !h.grad().defined();
    Tensor gh;  // [num_src, H*D]
    if (need_h) {
      if (fresh_h) {
        FS_ASSIGN_OR_RETURN(gh, h.MutableGrad());
      } else {
        FS_ASSIGN_OR_RETURN(gh, EmptyF32(device, hv.shape()));
      }
    }
    Tensor gh3;
    if (need_h) {
      FS_ASSIGN_OR_RETURN(gh3, gh.Reshape({num_src, heads, d}));
    }
    FS_ASSIGN_OR_RETURN(Tensor g_alpha_used, EmptyF32(device, {edges, heads}));
    FS_RETURN_IF_ERROR(kernels::SpmmEdgeHeadsBackward(ctx, s->csr, s->csr_t, s->perm, s->alpha_used, h3, g_out3,
                                                      &g_alpha_used, need_h ? &gh3 : nullptr));

    // Through dropout, the edge softmax and the scores.
    Tensor g_alpha = g_alpha_used;
    if (s->mask.defined()) {
      FS_ASSIGN_OR_RETURN(g_alpha, EmptyF32(device, {edges, heads}));
      FS_RETURN_IF_ERROR(kernels::DropoutBackward(ctx, s->p, s->mask, g_alpha_used, &g_alpha));
    }
    FS_ASSIGN_OR_RETURN(Tensor g_scores, EmptyF32(device, {edges, heads}));
    FS_RETURN_IF_ERROR(kernels::EdgeSoftmaxBackward(ctx, s->csr, s->alpha, g_alpha, &g_scores));
    FS_ASSIGN_OR_RETURN(Tensor g_el, EmptyF32(device, {num_src, heads}));
    FS_ASSIGN_OR_RETURN(Tensor g_er, EmptyF32(device, {num_dst, heads}));
    FS_RETURN_IF_ERROR(kernels::GatEdgeScoresBackward(ctx, s->csr, s->csr_t, s->perm, s->el, s->er, s->slope,
                                                      g_scores, &g_el, &g_er));

    // Through the per-head dot products into h and the attention vectors.
    Tensor ga_src, ga_dst;
    float beta_src = 0.0f, beta_dst = 0.0f;
    if (a_src.requires_grad()) FS_RETURN_IF_ERROR(internal::GradWithBeta(a_src, &ga_src, &beta_src));
    if (a_dst.requires_grad()) FS_RETURN_IF_ERROR(internal::GradWithBeta(a_dst, &ga_dst, &beta_dst));
    Tensor gh_dst = need_h ? gh.Slice(0, 0, num_dst) : Tensor();
    FS_RETURN_IF_ERROR(HeadDotsBackward(ctx, hv, a_src.value(), g_el, heads, d, need_h ? &gh : nullptr,
                                        a_src.requires_grad() ? &ga_src : nullptr, beta_src));
    FS_RETURN_IF_ERROR(HeadDotsBackward(ctx, hv.Slice(0, 0, num_dst), a_dst.value(), g_er, heads, d,
                                        need_h ? &gh_dst : nullptr, a_dst.requires_grad() ? &ga_dst : nullptr,
                                        beta_dst));
    if (need_h && !fresh_h) FS_RETURN_IF_ERROR(h.AccumulateGrad(ctx, gh));
    return Status::OK();
  });
}

}  // namespace foresight::autograd
