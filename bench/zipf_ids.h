// The embedding benches' ids (embedding_bench, embedding_cache_io): Zipf(s)
// ranks over each table's rows, scattered over the table so the hot rows
// are not neighbours, drawn table-major with one seeded generator so every
// bench replays the same batches.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace foresight::bench {

// Zipf(s) ranks over [0, n) by inverse CDF.
class Zipf {
 public:
  Zipf(int64_t n, double s);
  int64_t Draw(std::mt19937_64& rng) const;

 private:
  std::vector<double> cdf_;
};

// One batch's ids into ids[0, tables * per_table): table t's `per_table`
// ids (a batch of bags) at [t * per_table, (t + 1) * per_table), each a
// Zipf rank of `z` (over `rows`) scattered over the table's rows.
void DrawTableMajorIds(const Zipf& z, std::mt19937_64& rng, int64_t tables, int64_t rows, int64_t per_table,
                       int64_t* ids);

}  // namespace foresight::bench
