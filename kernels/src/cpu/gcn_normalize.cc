// GCN normalisation: copy each destination's in-edges in their order, append
// a self loop (source v for destination v) at the end of the row when the
// row has none, then weight edge (u -> v) by 1/sqrt(deg_in(v) * deg_out(u)),
// both degrees counted in the result (or deg_out given, for a chunk of a
// larger graph). Any input edge weights are replaced.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {

// `given_dout` (null: count in the result) holds deg_out per source.
template <typename I>
Status Normalize(const ExecContext& ctx, const Csr& csr, const int64_t* given_dout, Csr* out) {
  const int64_t num_dst = csr.num_dst(), num_src = csr.num_src;
  const int64_t* ip = csr.indptr.data<int64_t>();
  const I* idx = csr.indices.data<I>();
  const int64_t grain = DstGrain(num_dst, csr.num_edges(), 1);

  // New row lengths: old length plus one where the self loop is missing.
  FS_ASSIGN_OR_RETURN(Tensor indptr, Tensor::EmptyOn(csr.device(), {num_dst + 1}, DType::kI64));
  int64_t* np = indptr.data<int64_t>();
  np[0] = 0;
  ctx.pool->ParallelFor(num_dst, grain, [&](int64_t v0, int64_t v1) {
    for (int64_t v = v0; v < v1; ++v) {
      bool has_self = false;
      for (int64_t e = ip[v]; e < ip[v + 1]; ++e) has_self |= static_cast<int64_t>(idx[e]) == v;
      np[v + 1] = ip[v + 1] - ip[v] + (has_self ? 0 : 1);
    }
  });
  for (int64_t v = 0; v < num_dst; ++v) np[v + 1] += np[v];
  const int64_t num_edges = np[num_dst];

  FS_ASSIGN_OR_RETURN(Tensor indices, Tensor::EmptyOn(csr.device(), {num_edges}, csr.indices.dtype()));
  FS_ASSIGN_OR_RETURN(Tensor weight, Tensor::EmptyOn(csr.device(), {num_edges}, DType::kF32));
  I* ni = indices.data<I>();
  float* nw = weight.data<float>();
  std::vector<int64_t> deg_out(given_dout == nullptr ? static_cast<size_t>(num_src) : 0, 0);
  int64_t* dout = deg_out.data();
  ctx.pool->ParallelFor(num_dst, grain, [&](int64_t v0, int64_t v1) {
    for (int64_t v = v0; v < v1; ++v) {
      int64_t k = np[v];
      for (int64_t e = ip[v]; e < ip[v + 1]; ++e) ni[k++] = idx[e];
      if (k < np[v + 1]) ni[k] = static_cast<I>(v);
      if (given_dout != nullptr) continue;
      // Integer counts: the total is the same in any order.
      for (k = np[v]; k < np[v + 1]; ++k) __atomic_fetch_add(&dout[static_cast<int64_t>(ni[k])], 1, __ATOMIC_RELAXED);
    }
  });
  if (given_dout != nullptr) {
    // A degree below 1 for a source an edge reads would give an infinite
    // weight: report the first such edge (row order, so the message does
    // not depend on the thread count).
    for (int64_t v = 0; v < num_dst; ++v) {
      for (int64_t k = np[v]; k < np[v + 1]; ++k) {
        const int64_t u = static_cast<int64_t>(ni[k]);
        if (given_dout[u] < 1) {
          return InvalidArgument("GcnNormalizeWithOutDegrees: source " + std::to_string(u) + " (read by row " +
                                 std::to_string(v) + ") has out-degree " + std::to_string(given_dout[u]) +
                                 "; it must be >= 1");
        }
      }
    }
  }
  const int64_t* deg = given_dout != nullptr ? given_dout : dout;
  ctx.pool->ParallelFor(num_dst, grain, [&](int64_t v0, int64_t v1) {
    for (int64_t v = v0; v < v1; ++v) {
      const double din = static_cast<double>(np[v + 1] - np[v]);
      for (int64_t k = np[v]; k < np[v + 1]; ++k) {
        nw[k] = static_cast<float>(1.0 / std::sqrt(din * static_cast<double>(deg[static_cast<int64_t>(ni[k])])));
      }
    }
  });
  out->indptr = indptr;
  out->indices = indices;
  out->num_src = num_src;
  out->edge_weight = weight;
  return Status::OK();
}

template <typename I>
void OutDegrees(const ExecContext& ctx, const Csr& csr, int64_t* dout) {
  const int64_t num_dst = csr.num_dst();
  const int64_t* ip = csr.indptr.data<int64_t>();
  const I* idx = csr.indices.data<I>();
  ctx.pool->ParallelFor(num_dst, DstGrain(num_dst, csr.num_edges(), 1), [&](int64_t v0, int64_t v1) {
    for (int64_t v = v0; v < v1; ++v) {
      bool has_self = false;
      for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
        const int64_t u = static_cast<int64_t>(idx[e]);
        has_self |= u == v;
        __atomic_fetch_add(&dout[u], 1, __ATOMIC_RELAXED);  // integer counts: order-free
      }
      if (!has_self) __atomic_fetch_add(&dout[v], 1, __ATOMIC_RELAXED);
    }
  });
}

}  // namespace

Status GcnNormalize(const ExecContext& ctx, const Csr& csr, Csr* out) {
  return WithIndexType(csr.indices.dtype(),
                       [&](auto tag) { return Normalize<decltype(tag)>(ctx, csr, nullptr, out); });
}

Status GcnOutDegrees(const ExecContext& ctx, const Csr& csr, Tensor* out_degree) {
  FS_ASSIGN_OR_RETURN(Tensor degree, Tensor::EmptyOn(csr.device(), {csr.num_src}, DType::kI64));
  int64_t* d = degree.data<int64_t>();
  ctx.pool->ParallelFor(csr.num_src, kElementGrain, [d](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) d[i] = 0;
  });
  FS_RETURN_IF_ERROR(WithIndexType(csr.indices.dtype(), [&](auto tag) {
    OutDegrees<decltype(tag)>(ctx, csr, d);
    return Status::OK();
  }));
  *out_degree = degree;
  return Status::OK();
}

Status GcnNormalizeWithOutDegrees(const ExecContext& ctx, const Csr& csr, const Tensor& src_out_degree,
                                  Csr* out) {
  return WithIndexType(csr.indices.dtype(), [&](auto tag) {
    return Normalize<decltype(tag)>(ctx, csr, src_out_degree.data<int64_t>(), out);
  });
}

}  // namespace foresight::kernels::cpu
