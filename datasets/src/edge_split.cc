// SplitEdgesForLink (edge_split.h). The split of a pair depends only on
// (seed, pair), so both directions of an undirected pair land together and
// the result does not depend on the CSR order or the thread count.
#include "edge_split.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "foresight/core/rng.h"
#include "foresight/storage/npy.h"

namespace foresight::datasets::internal {
namespace {

constexpr uint64_t kEdgeSplitStream = 0x45444745534C4954ull;  // "EDGESLIT"

int64_t At(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kI32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

}  // namespace

Status CheckEdgeSplit(const std::vector<double>& f) {
  if (f.size() != 3) return InvalidArgument("--edge-split takes three fractions (train,val,test)");
  double sum = 0;
  for (double v : f) {
    if (!(v >= 0.0 && v <= 1.0)) return InvalidArgument("--edge-split fractions must be in [0, 1]");
    sum += v;
  }
  if (std::fabs(sum - 1.0) > 1e-6) {
    return InvalidArgument("--edge-split fractions must sum to 1, got " + std::to_string(sum));
  }
  return Status::OK();
}

Status SplitEdgesForLink(storage::DatasetWriter* w, int64_t n, bool undirected, const std::vector<double>& f,
                         uint64_t seed, storage::LinkLayout* layout, int64_t* train_graph_edges) {
  FS_ASSIGN_OR_RETURN(Tensor indptr, storage::LoadNpy(w->StagingPath(storage::kIndptrFile)));
  FS_ASSIGN_OR_RETURN(Tensor indices, storage::LoadNpy(w->StagingPath(storage::kIndicesFile)));
  const RngKey key = RngKey::FromSeed(seed).Fold(kEdgeSplitStream);
  auto split_of = [&](int64_t a, int64_t b) {
    const float u = key.Uniform(static_cast<uint64_t>(a), static_cast<uint64_t>(b));
    return u < f[0] ? 0 : u < f[0] + f[1] ? 1 : 2;
  };
  std::vector<int64_t> triples[3];
  std::vector<int64_t> new_indptr(static_cast<size_t>(n + 1), 0);
  std::vector<int64_t> new_indices;
  std::vector<char> in_train(static_cast<size_t>(n), 0), named(static_cast<size_t>(n), 0);
  const int64_t* ip = indptr.data<int64_t>();
  for (int64_t dst = 0; dst < n; ++dst) {
    for (int64_t e = ip[dst]; e < ip[dst + 1]; ++e) {
      const int64_t src = At(indices, e);
      const int64_t a = undirected ? std::min(src, dst) : src, b = undirected ? std::max(src, dst) : dst;
      const int s = split_of(a, b);
      if (s == 0) new_indices.push_back(src);
      // An undirected pair is one triple (its src < dst direction; a self
      // loop once).
      if (!undirected || src <= dst) {
        triples[s].insert(triples[s].end(), {src, 0, dst});
        (s == 0 ? in_train : named)[static_cast<size_t>(src)] = 1;
        (s == 0 ? in_train : named)[static_cast<size_t>(dst)] = 1;
      }
    }
    new_indptr[static_cast<size_t>(dst + 1)] = static_cast<int64_t>(new_indices.size());
  }
  const char* names[3] = {storage::kLinkTrainArray, storage::kLinkValArray, storage::kLinkTestArray};
  for (int k = 0; k < 3; ++k) {
    if (triples[k].empty()) {
      return InvalidArgument(std::string("--edge-split ") + std::to_string(f[0]) + "," + std::to_string(f[1]) + "," +
                             std::to_string(f[2]) + " leaves the " + (k == 0 ? "train" : k == 1 ? "val" : "test") +
                             " split without edges (" + std::to_string(indices.numel()) + " edges in the graph)");
    }
    const int64_t m = static_cast<int64_t>(triples[k].size() / 3);
    FS_RETURN_IF_ERROR(w->WriteArray(std::string(names[k]) + ".npy",
                                     Tensor::FromBlob(triples[k].data(), {m, 3}, DType::kI64)));
  }
  Tensor relation = Tensor::Zeros({1, 4}, DType::kU8);
  std::memcpy(relation.data<uint8_t>(), "edge", 4);
  FS_RETURN_IF_ERROR(storage::SaveNpyBytes(w->StagingPath(std::string(storage::kRelationNamesArray) + ".npy"),
                                           relation));
  // The graph of the training edges only.
  FS_RETURN_IF_ERROR(storage::SaveNpy(w->StagingPath(storage::kIndptrFile),
                                      Tensor::FromBlob(new_indptr.data(), {n + 1}, DType::kI64)));
  const int64_t e = static_cast<int64_t>(new_indices.size());
  if (indices.dtype() == DType::kI32) {
    std::vector<int32_t> narrow(new_indices.begin(), new_indices.end());
    FS_RETURN_IF_ERROR(storage::SaveNpy(w->StagingPath(storage::kIndicesFile),
                                        Tensor::FromBlob(narrow.data(), {e}, DType::kI32)));
  } else {
    FS_RETURN_IF_ERROR(storage::SaveNpy(w->StagingPath(storage::kIndicesFile),
                                        Tensor::FromBlob(new_indices.data(), {e}, DType::kI64)));
  }
  layout->num_relations = 1;
  layout->num_train = static_cast<int64_t>(triples[0].size() / 3);
  layout->num_val = static_cast<int64_t>(triples[1].size() / 3);
  layout->num_test = static_cast<int64_t>(triples[2].size() / 3);
  layout->unseen_entities = 0;
  for (int64_t v = 0; v < n; ++v) layout->unseen_entities += named[static_cast<size_t>(v)] && !in_train[static_cast<size_t>(v)];
  *train_graph_edges = e;
  return Status::OK();
}

}  // namespace foresight::datasets::internal
