// Csr validation and transpose (a stable counting sort by source).
#include <algorithm>
#include <string>
#include <vector>

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {

template <typename I>
Status ValidateIndices(const Csr& csr, const char* what) {
  const I* idx = csr.indices.data<I>();
  for (int64_t e = 0; e < csr.num_edges(); ++e) {
    const int64_t u = static_cast<int64_t>(idx[e]);
    if (u < 0 || u >= csr.num_src) {
      return OutOfRange(std::string(what) + ".indices[" + std::to_string(e) + "] = " + std::to_string(u) +
                        " is out of range [0, " + std::to_string(csr.num_src) + ")");
    }
  }
  return Status::OK();
}

template <typename I>
Status TransposeTyped(const Csr& csr, Csr* out, Tensor* edge_perm) {
  const int64_t num_dst = csr.num_dst(), num_src = csr.num_src, num_edges = csr.num_edges();
  const Device dev = csr.device();
  FS_ASSIGN_OR_RETURN(Tensor indptr, Tensor::EmptyOn(dev, {num_src + 1}, DType::kI64));
  FS_ASSIGN_OR_RETURN(Tensor indices, Tensor::EmptyOn(dev, {num_edges}, csr.indices.dtype()));
  FS_ASSIGN_OR_RETURN(Tensor perm, Tensor::EmptyOn(dev, {num_edges}, DType::kI64));
  const int64_t* ip = csr.indptr.data<int64_t>();
  const I* idx = csr.indices.data<I>();
  int64_t* tp = indptr.data<int64_t>();
  I* tidx = indices.data<I>();
  int64_t* pp = perm.data<int64_t>();

  std::fill(tp, tp + num_src + 1, 0);
  for (int64_t e = 0; e < num_edges; ++e) ++tp[static_cast<int64_t>(idx[e]) + 1];
  for (int64_t u = 0; u < num_src; ++u) tp[u + 1] += tp[u];
  std::vector<int64_t> next(tp, tp + num_src);
  // Visiting edges in original order keeps each row sorted by position.
  for (int64_t v = 0; v < num_dst; ++v) {
    for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
      const int64_t slot = next[static_cast<int64_t>(idx[e])]++;
      tidx[slot] = static_cast<I>(v);
      pp[slot] = e;
    }
  }
  Tensor weight;
  if (csr.edge_weight.defined()) {
    FS_ASSIGN_OR_RETURN(weight, Tensor::EmptyOn(dev, {num_edges}, DType::kF32));
    const float* w = csr.edge_weight.data<float>();
    float* tw = weight.data<float>();
    for (int64_t k = 0; k < num_edges; ++k) tw[k] = w[pp[k]];
  }
  out->indptr = indptr;
  out->indices = indices;
  out->num_src = num_dst;
  out->edge_weight = weight;
  if (edge_perm != nullptr) *edge_perm = perm;
  return Status::OK();
}

}  // namespace

Status ValidateCsr(const Csr& csr, const char* what) {
  const int64_t* ip = csr.indptr.data<int64_t>();
  const int64_t num_dst = csr.num_dst();
  if (ip[0] != 0) {
    return InvalidArgument(std::string(what) + ".indptr[0] = " + std::to_string(ip[0]) + ", expected 0");
  }
  for (int64_t v = 0; v < num_dst; ++v) {
    if (ip[v + 1] < ip[v]) {
      return InvalidArgument(std::string(what) + ".indptr[" + std::to_string(v + 1) + "] = " +
                             std::to_string(ip[v + 1]) + " is less than indptr[" + std::to_string(v) +
                             "] = " + std::to_string(ip[v]) + " (indptr must not decrease)");
    }
  }
  if (ip[num_dst] != csr.num_edges()) {
    return InvalidArgument(std::string(what) + ".indptr[" + std::to_string(num_dst) + "] = " +
                           std::to_string(ip[num_dst]) + ", expected the number of edges " +
                           std::to_string(csr.num_edges()));
  }
  return csr.indices.dtype() == DType::kI32 ? ValidateIndices<int32_t>(csr, what)
                                            : ValidateIndices<int64_t>(csr, what);
}

Status TransposeCsr(const ExecContext& ctx, const Csr& csr, Csr* out, Tensor* edge_perm) {
  return csr.indices.dtype() == DType::kI32 ? TransposeTyped<int32_t>(csr, out, edge_perm)
                                            : TransposeTyped<int64_t>(csr, out, edge_perm);
}

}  // namespace foresight::kernels::cpu
