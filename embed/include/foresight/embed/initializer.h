// The seeded initialiser of embedding rows: row `key`'s values are a pure
// function of (seed, key), so a table created in memory, on disk or row by
// row on first touch (RocksDB, a dynamic vocabulary) starts from the same
// rows, and a row evicted before it was ever written reads back the same.
#pragma once

#include <cstdint>

#include "foresight/kernels/ops.h"

namespace foresight::embed {

struct EmbeddingInit {
  uint64_t seed = 0;  // Default: 0
  // Values are uniform in [-scale, scale). Default (<= 0): 1/sqrt(rows) of
  // the table (DLRM's), or 0.01 for a dynamic table (rows unknown).
  float scale = 0.0f;
};

// The scale `init` gives a table of `rows` rows (0: dynamic).
float InitScale(const EmbeddingInit& init, int64_t rows);

// Writes row `key` (layout.row_bytes() bytes at `row`, host memory): the
// embedding from (seed, key), the optimizer state zero. Thread-safe.
void InitializeRow(uint64_t seed, float scale, const kernels::EmbeddingRowLayout& layout, int64_t key, void* row);

}  // namespace foresight::embed
