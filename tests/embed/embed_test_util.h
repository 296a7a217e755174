// Helpers for the embed tests: store options per backend in a scratch
// directory, and deterministic random batches with repeated ids.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "foresight/embed/embedding_bag_collection.h"
#include "storage/row_store_test_util.h"

namespace foresight::embed::test {

inline storage::RowStoreOptions StoreFor(storage::RowStoreKind kind, const storage::testing::ScratchDir& dir,
                                         const std::string& name) {
  storage::RowStoreOptions o;
  o.kind = kind;
  o.create = true;
  o.writable = true;
  if (kind == storage::RowStoreKind::kRocksDb) {
    o.path = dir.File(name + ".rocksdb");
  } else if (kind != storage::RowStoreKind::kMemory) {
    o.path = dir.File(name + ".npy");
  }
  return o;
}

// A batch of `batch` samples over `tables` tables: bags of 0..max_bag ids
// drawn from a skewed distribution over `rows` rows (many repeats).
struct Batch {
  Tensor ids, offsets;
};

inline Batch RandomBatch(int64_t tables, int64_t batch, int64_t rows, int max_bag, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> ids, offsets{0};
  for (int64_t q = 0; q < tables * batch; ++q) {
    const int len = static_cast<int>(rng() % (max_bag + 1));
    for (int i = 0; i < len; ++i) {
      const double u = std::uniform_real_distribution<double>(0, 1)(rng);
      ids.push_back(static_cast<int64_t>(u * u * u * static_cast<double>(rows)) % rows);
    }
    offsets.push_back(static_cast<int64_t>(ids.size()));
  }
  Batch b;
  b.ids = Tensor::Empty({static_cast<int64_t>(ids.size())}, DType::kI64);
  std::copy(ids.begin(), ids.end(), b.ids.data<int64_t>());
  b.offsets = Tensor::Empty({static_cast<int64_t>(offsets.size())}, DType::kI64);
  std::copy(offsets.begin(), offsets.end(), b.offsets.data<int64_t>());
  return b;
}

inline std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

}  // namespace foresight::embed::test
