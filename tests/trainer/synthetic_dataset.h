// A small node-classification dataset for trainer tests: a homophilous
// random graph (most edges join nodes of the same class) whose features carry
// a noisy class signal, so every model can learn it in a few epochs.
#pragma once

#include <cstdint>
#include <string>

#include "foresight/core/dtype.h"
#include "foresight/core/status.h"

namespace foresight::testing {

struct SyntheticSpec {
  int64_t num_nodes = 240;
  int64_t num_classes = 3;
  int64_t feature_dim = 8;
  int64_t out_degree = 4;        // random neighbours drawn per node (made undirected)
  double same_class = 0.85;      // probability a drawn neighbour shares the class
  double signal = 0.8;           // weight of the class signal in the features
  DType feature_dtype = DType::kF32;
  bool original_ids = false;     // write original_ids.npy (i64: 1000 + 7 * i)
  uint32_t seed = 1;
};

// Writes the dataset to `dir` (a new directory) with storage::DatasetWriter.
// Splits: the first half of a random permutation trains, then a quarter each
// for validation and test.
Status WriteSyntheticDataset(const std::string& dir, const SyntheticSpec& spec);

}  // namespace foresight::testing
