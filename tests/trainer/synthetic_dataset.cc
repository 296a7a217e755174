#include "synthetic_dataset.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "foresight/core/tensor.h"
#include "foresight/storage/dataset.h"

namespace foresight::testing {

namespace {

Tensor I64Tensor(const std::vector<int64_t>& v) {
  Tensor t = Tensor::Empty({static_cast<int64_t>(v.size())}, DType::kI64);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

}  // namespace

Status WriteSyntheticDataset(const std::string& dir, const SyntheticSpec& spec) {
  const int64_t n = spec.num_nodes, c = spec.num_classes, f = spec.feature_dim;
  std::mt19937_64 rng(spec.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);

  std::vector<int64_t> label(n);
  std::vector<std::vector<int64_t>> by_class(c);
  for (int64_t i = 0; i < n; ++i) {
    label[i] = static_cast<int64_t>(rng() % c);
    by_class[label[i]].push_back(i);
  }
  // In-neighbour lists by destination, undirected, no duplicates, no loops.
  std::vector<std::vector<int64_t>> in(n);
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t k = 0; k < spec.out_degree; ++k) {
      const std::vector<int64_t>& pool =
          uniform(rng) < spec.same_class ? by_class[label[v]] : by_class[rng() % c];
      if (pool.empty()) continue;
      const int64_t u = pool[rng() % pool.size()];
      if (u == v) continue;
      in[v].push_back(u);
      in[u].push_back(v);
    }
  }
  std::vector<int64_t> indptr(n + 1, 0);
  std::vector<int32_t> indices;
  for (int64_t v = 0; v < n; ++v) {
    std::sort(in[v].begin(), in[v].end());
    in[v].erase(std::unique(in[v].begin(), in[v].end()), in[v].end());
    for (int64_t u : in[v]) indices.push_back(static_cast<int32_t>(u));
    indptr[v + 1] = static_cast<int64_t>(indices.size());
  }

  Tensor features32 = Tensor::Empty({n, f}, DType::kF32);
  float* x = features32.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < f; ++j) {
      const double signal = (j % c == label[i]) ? spec.signal : 0.0;
      x[i * f + j] = static_cast<float>(signal + 0.6 * normal(rng));
    }
  }
  Tensor features = features32;
  if (spec.feature_dtype == DType::kF16) {
    features = Tensor::Empty({n, f}, DType::kF16);
    uint16_t* h = static_cast<uint16_t*>(features.raw_data());
    for (int64_t i = 0; i < n * f; ++i) h[i] = FloatToHalf(x[i]);
  } else if (spec.feature_dtype != DType::kF32) {
    return InvalidArgument("synthetic dataset: features must be f32 or f16");
  }

  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  const int64_t n_train = n / 2, n_val = n / 4;
  std::vector<int64_t> train(perm.begin(), perm.begin() + n_train);
  std::vector<int64_t> val(perm.begin() + n_train, perm.begin() + n_train + n_val);
  std::vector<int64_t> test(perm.begin() + n_train + n_val, perm.end());

  auto writer_or = storage::DatasetWriter::Create(dir, /*overwrite=*/false);
  if (!writer_or.ok()) return writer_or.status();
  storage::DatasetWriter& w = **writer_or;
  Tensor indices_t = Tensor::Empty({static_cast<int64_t>(indices.size())}, DType::kI32);
  std::copy(indices.begin(), indices.end(), indices_t.data<int32_t>());
  FS_RETURN_IF_ERROR(w.WriteArray(storage::kIndptrFile, I64Tensor(indptr)));
  FS_RETURN_IF_ERROR(w.WriteArray(storage::kIndicesFile, indices_t));
  FS_RETURN_IF_ERROR(w.WriteArray(storage::kFeaturesFile, features));
  FS_RETURN_IF_ERROR(w.WriteArray(storage::kLabelsFile, I64Tensor(label)));
  FS_RETURN_IF_ERROR(w.WriteArray(storage::kTrainIdsFile, I64Tensor(train)));
  FS_RETURN_IF_ERROR(w.WriteArray(storage::kValIdsFile, I64Tensor(val)));
  FS_RETURN_IF_ERROR(w.WriteArray(storage::kTestIdsFile, I64Tensor(test)));
  if (spec.original_ids) {
    std::vector<int64_t> original(n);
    for (int64_t i = 0; i < n; ++i) original[i] = 1000 + 7 * i;
    FS_RETURN_IF_ERROR(w.WriteArray(storage::kOriginalIdsFile, I64Tensor(original)));
  }
  storage::DatasetManifest& m = w.manifest();
  m.name = "synthetic";
  m.num_nodes = n;
  m.num_edges = static_cast<int64_t>(indices.size());
  m.feature_dim = f;
  m.feature_dtype = spec.feature_dtype;
  m.num_classes = c;
  m.id_map = spec.original_ids ? storage::IdMap::kInt : storage::IdMap::kNone;
  return w.Commit();
}

}  // namespace foresight::testing
