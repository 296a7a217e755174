#include "node_data.h"

#include <cstring>

#include "foresight/kernels/ops.h"

namespace foresight::trainer::internal {

namespace {

int64_t LabelAt(const Tensor& labels, int64_t i) {
  return labels.dtype() == DType::kI32 ? labels.data<int32_t>()[i] : labels.data<int64_t>()[i];
}

Status CheckIds(const Tensor& ids, int64_t n, const char* what) {
  FS_RETURN_IF_ERROR(CheckDType(ids, DType::kI64, what));
  FS_RETURN_IF_ERROR(CheckDim(ids, 1, what));
  FS_RETURN_IF_ERROR(CheckContiguous(ids, what));
  const int64_t* p = ids.data<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (p[i] < 0 || p[i] >= n) {
      return OutOfRange(std::string(what) + ": id " + std::to_string(p[i]) + " at position " +
                        std::to_string(i) + " is outside [0, " + std::to_string(n) + ")");
    }
  }
  return Status::OK();
}

}  // namespace

Status OpenNodeData(const std::string& dir, NodeData* out) {
  FS_ASSIGN_OR_RETURN(out->dataset, storage::Dataset::Open(dir));
  const storage::Dataset& d = *out->dataset;
  if (!d.labels().defined()) return FailedPrecondition(dir + ": the dataset has no labels.npy");
  if (!d.features().defined() && !d.sparse_features()) {
    return FailedPrecondition(dir + ": the dataset has no features.npy");
  }
  if (d.num_classes() < 1) {
    return FailedPrecondition(dir + ": manifest num_classes is " + std::to_string(d.num_classes()) +
                              "; node classification needs at least 1 class" +
                              (d.manifest().link.is_null() ? std::string()
                                                           : std::string(" (it holds link-prediction triples: "
                                                                         "train them with --task link)")));
  }
  if (!d.train_ids().defined() || d.train_ids().numel() == 0) {
    return FailedPrecondition(dir + ": the dataset has no training ids (train_ids.npy)");
  }
  out->graph.indptr = d.indptr();
  out->graph.indices = d.indices();
  out->graph.num_src = d.num_nodes();
  return Status::OK();
}

StatusOr<Tensor> FeaturesAsF32(const ExecContext& ctx, const Tensor& features) {
  if (features.dtype() == DType::kF32 && features.is_contiguous()) return features;
  Tensor out = Tensor::Empty(features.shape(), DType::kF32);
  FS_RETURN_IF_ERROR(kernels::GatherRows(ctx, features, IdRange(0, features.size(0)), &out));
  return out;
}

StatusOr<Tensor> OnDevice(const Tensor& t, Device device) {
  if (!t.defined() || t.device() == device) return t;
  return t.To(device);
}

Status CsrOnDevice(Device device, kernels::Csr* csr) {
  FS_ASSIGN_OR_RETURN(csr->indptr, OnDevice(csr->indptr, device));
  FS_ASSIGN_OR_RETURN(csr->indices, OnDevice(csr->indices, device));
  FS_ASSIGN_OR_RETURN(csr->edge_weight, OnDevice(csr->edge_weight, device));
  return Status::OK();
}

StatusOr<float> HostScalar(const Tensor& t) {
  if (t.numel() != 1 || t.dtype() != DType::kF32) {
    return Internal("HostScalar: expected one f32 value, got " + t.ToString());
  }
  if (t.device().is_cpu()) return t.data<float>()[0];
  FS_ASSIGN_OR_RETURN(const Tensor host, t.To(Device::Cpu()));
  return host.data<float>()[0];
}

StatusOr<Tensor> GatherLabels(const Tensor& labels, const Tensor& ids) {
  FS_RETURN_IF_ERROR(CheckIds(ids, labels.size(0), "label ids"));
  Tensor out = Tensor::Empty({ids.numel()}, DType::kI64);
  const int64_t* id = ids.data<int64_t>();
  int64_t* o = out.data<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) o[i] = LabelAt(labels, id[i]);
  return out;
}

StatusOr<Tensor> MaskedLabels(const Tensor& labels, const Tensor& ids) {
  FS_RETURN_IF_ERROR(CheckIds(ids, labels.size(0), "label ids"));
  Tensor out = Tensor::Empty({labels.size(0)}, DType::kI64);
  int64_t* o = out.data<int64_t>();
  for (int64_t i = 0; i < labels.size(0); ++i) o[i] = -1;
  const int64_t* id = ids.data<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) o[id[i]] = LabelAt(labels, id[i]);
  return out;
}

Tensor IdRange(int64_t begin, int64_t end) {
  Tensor t = Tensor::Empty({end - begin}, DType::kI64);
  int64_t* p = t.data<int64_t>();
  for (int64_t i = begin; i < end; ++i) p[i - begin] = i;
  return t;
}

Tensor ConcatIds(const Tensor& a, const Tensor& b) {
  Tensor t = Tensor::Empty({a.numel() + b.numel()}, DType::kI64);
  if (a.numel() > 0) std::memcpy(t.data<int64_t>(), a.data<int64_t>(), a.nbytes());
  if (b.numel() > 0) std::memcpy(t.data<int64_t>() + a.numel(), b.data<int64_t>(), b.nbytes());
  return t;
}

}  // namespace foresight::trainer::internal
