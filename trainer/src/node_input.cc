#include "node_input.h"

#include <cmath>
#include <cstring>

#include "foresight/autograd/functional.h"
#include "foresight/autograd/graph_block.h"
#include "node_data.h"

namespace foresight::trainer::internal {

using autograd::Var;

StatusOr<NodeInput> OpenNodeInput(const std::string& node_features, const storage::Dataset& d) {
  NodeInput in;
  in.kind = node_features;
  if (node_features == "degree") {
    in.dense = DegreeFeatures(d.indptr());
    in.width = kDegreeFeatureDim;
  } else if (IsLearned(node_features)) {
    FS_ASSIGN_OR_RETURN(in.width, ParseLearnedDim(node_features));
    if (WithFileFeatures(node_features)) {
      // The dataset's dense rows, the learned ones beside them.
      if (d.sparse_features() || d.feature_dim() < 1) {
        return FailedPrecondition(d.dir() + ": --node-features " + node_features + " puts learned rows beside the "
                                  "dataset's dense features, and " +
                                  (d.sparse_features() ? std::string("its features are sparse")
                                                       : std::string("it has no features")) +
                                  "; use --node-features learned:DIM alone");
      }
      in.dense = d.features();
      in.width += d.feature_dim();
    }
  } else if (node_features == "one-hot") {
    in.table = true;
    in.width = d.num_nodes();
  } else if (node_features == "file") {
    if (d.sparse_features()) {
      in.table = true;
      in.width = d.feature_dim();
      in.indptr = d.feature_indptr();
      in.indices = d.feature_indices();
      in.values = d.feature_values();
    } else {
      in.dense = d.features();
      in.width = d.feature_dim();
    }
    if (in.width < 1) {
      return FailedPrecondition(
          d.dir() + ": the dataset has no node features, so the model has nothing to read; pass --node-features "
          "degree (log-degree and degree buckets, computed from the graph), --node-features learned:DIM (a "
          "learned embedding of DIM values per node) or --node-features one-hot (node identity as a learned row "
          "of the first layer), or preprocess again with --features F (.npy, text rows or sparse .json) or "
          "--sparse-features F");
    }
  } else {
    return InvalidArgument("node_features: '" + node_features + "' is not one of file, degree, one-hot, learned:DIM");
  }
  return in;
}

Status CheckInputOnDevice(const NodeInput& in, Device device, const std::string& dataset) {
  if (device.is_cpu() || (!in.table && in.learned == nullptr)) return Status::OK();
  return Unimplemented("device: " + device.ToString() + " requested, but the node features of " + dataset +
                       (in.table ? " go through the model's input table (sparse features or one-hot)"
                                 : " are learned rows") +
                       ", which does not run on a GPU yet; on a GPU, training takes dense features "
                       "(--node-features file with dense features, or degree); training does not fall back to "
                       "the CPU");
}

Tensor DegreeFeatures(const Tensor& indptr) {
  const int64_t n = indptr.numel() - 1;
  Tensor out = Tensor::Zeros({n, kDegreeFeatureDim}, DType::kF32);
  const int64_t* p = indptr.data<int64_t>();
  float* o = out.data<float>();
  for (int64_t v = 0; v < n; ++v) {
    const double d = static_cast<double>(p[v + 1] - p[v]);
    float* row = o + v * kDegreeFeatureDim;
    row[0] = static_cast<float>(std::log1p(d));
    const int64_t bucket = std::min<int64_t>(kDegreeBuckets - 1, static_cast<int64_t>(std::floor(std::log2(1.0 + d))));
    row[1 + bucket] = 1.0f;
  }
  return out;
}

namespace {

// The CSR rows of `ids` (a batch's input nodes) out of the dataset's rows.
kernels::Csr RowsOf(const NodeInput& in, const Tensor& ids) {
  const int64_t n = ids.numel();
  const int64_t* id = ids.data<int64_t>();
  const int64_t* p = in.indptr.data<int64_t>();
  Tensor indptr = Tensor::Empty({n + 1}, DType::kI64);
  int64_t* q = indptr.data<int64_t>();
  q[0] = 0;
  for (int64_t i = 0; i < n; ++i) q[i + 1] = q[i] + (p[id[i] + 1] - p[id[i]]);
  Tensor indices = Tensor::Empty({q[n]}, DType::kI32);
  Tensor values = Tensor::Empty({q[n]}, DType::kF32);
  const int32_t* src_i = in.indices.data<int32_t>();
  const float* src_v = in.values.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t begin = p[id[i]], len = p[id[i] + 1] - begin;
    if (len == 0) continue;
    std::memcpy(indices.data<int32_t>() + q[i], src_i + begin, static_cast<size_t>(len) * sizeof(int32_t));
    std::memcpy(values.data<float>() + q[i], src_v + begin, static_cast<size_t>(len) * sizeof(float));
  }
  kernels::Csr csr;
  csr.indptr = indptr;
  csr.indices = indices;
  csr.edge_weight = values;
  csr.num_src = in.width;
  return csr;
}

}  // namespace

StatusOr<Var> InputRows(autograd::Tape& tape, GnnModel& model, const NodeInput& in, const Tensor& ids) {
  if (!in.table) {
    if (!ids.defined()) {
      FS_ASSIGN_OR_RETURN(Tensor all, FeaturesAsF32(tape.ctx(), in.dense));
      return Var(all);
    }
    Tensor x = Tensor::Empty({ids.numel(), in.width}, DType::kF32);
    FS_RETURN_IF_ERROR(kernels::GatherRows(tape.ctx(), in.dense, ids, &x));
    return Var(x);
  }
  autograd::Parameter* table = model.input_table();
  if (table == nullptr || table->value().size(0) != in.width) {
    return Internal("node input: the model has no input table of " + std::to_string(in.width) + " rows");
  }
  if (!in.indptr.defined()) {  // one-hot: row v of the table
    if (!ids.defined()) return table->var();
    return autograd::GatherRows(tape, table->var(), ids);
  }
  kernels::Csr csr;
  if (ids.defined()) {
    csr = RowsOf(in, ids);
  } else {
    csr.indptr = in.indptr;
    csr.indices = in.indices;
    csr.edge_weight = in.values;
    csr.num_src = in.width;
  }
  autograd::GraphBlock bag(std::move(csr));
  return autograd::Aggregate(tape, bag, kernels::Reduce::kSum, table->var());
}

StatusOr<Tensor> AllInputRows(const ExecContext& ctx, GnnModel& model, const NodeInput& in) {
  if (!in.table) return FeaturesAsF32(ctx, in.dense);
  autograd::Tape tape(ctx, /*training=*/false, /*record=*/false);
  FS_ASSIGN_OR_RETURN(Var x, InputRows(tape, model, in, Tensor()));
  return x.value();
}

}  // namespace foresight::trainer::internal
