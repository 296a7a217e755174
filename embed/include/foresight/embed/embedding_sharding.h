// Which rank owns which rows of a collection of embedding tables split
// across the ranks of a job (issue 16), and where a row lives on its owner.
//   row-wise:   row `id` of every table belongs to rank id % N, as row
//               id / N of that rank's part of the table (hot low ids, the
//               skew of click logs, spread over all ranks);
//   table-wise: each table belongs to one rank whole (largest tables first,
//               each to the rank holding the fewest rows so far).
// A rank's shard is itself a collection: its tables (every table row-wise,
// its own tables table-wise) in ascending global order, each of the rows it
// owns. A pure function of the tables' rows and the rank count, so every
// rank computes the same plan. Thread-safe (immutable).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::embed {

enum class ShardingKind { kRow, kTable };
// "row", "table"; InvalidArgument naming the choices.
StatusOr<ShardingKind> ParseShardingKind(const std::string& name);
const char* ShardingKindName(ShardingKind kind);

class EmbeddingSharding {
 public:
  // table_rows: rows of each (dense) table. InvalidArgument when a rank
  // would hold nothing: table-wise with fewer tables than ranks, row-wise
  // with a table of fewer rows than ranks.
  static StatusOr<EmbeddingSharding> Make(ShardingKind kind, std::vector<int64_t> table_rows, int ranks);

  ShardingKind kind() const { return kind_; }
  int ranks() const { return ranks_; }
  int64_t num_tables() const { return static_cast<int64_t>(table_rows_.size()); }
  const std::vector<int64_t>& table_rows() const { return table_rows_; }

  // The rank holding row `id` of table t, and the row's id in its shard's
  // part of table t.
  int Owner(int64_t table, int64_t id) const {
    return kind_ == ShardingKind::kRow ? static_cast<int>(id % ranks_) : table_owner_[static_cast<size_t>(table)];
  }
  int64_t LocalId(int64_t id) const { return kind_ == ShardingKind::kRow ? id / ranks_ : id; }
  // The inverse: row `local_id` of the shard's part of table t on `rank`.
  int64_t GlobalId(int rank, int64_t local_id) const {
    return kind_ == ShardingKind::kRow ? local_id * ranks_ + rank : local_id;
  }

  // The global tables of `rank`'s shard, in its order.
  const std::vector<int64_t>& TablesOf(int rank) const { return tables_of_[static_cast<size_t>(rank)]; }
  // Rows of each of `rank`'s tables (TablesOf's order).
  std::vector<int64_t> ShardRows(int rank) const;

 private:
  ShardingKind kind_ = ShardingKind::kRow;
  int ranks_ = 1;
  std::vector<int64_t> table_rows_;
  std::vector<int> table_owner_;                 // table-wise
  std::vector<std::vector<int64_t>> tables_of_;  // per rank
};

// Rank r's part [begin, end) of a global batch of n samples: r-th of N
// contiguous, near-equal parts (as data-parallel GNN training splits its
// batches), so the parts in rank order are the batch in order.
inline int64_t RankPartBegin(int64_t n, int rank, int ranks) { return n * rank / ranks; }
inline int64_t RankPartSize(int64_t n, int rank, int ranks) {
  return RankPartBegin(n, rank + 1, ranks) - RankPartBegin(n, rank, ranks);
}

}  // namespace foresight::embed
