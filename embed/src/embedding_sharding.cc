#include "foresight/embed/embedding_sharding.h"

#include <algorithm>
#include <numeric>

namespace foresight::embed {

StatusOr<ShardingKind> ParseShardingKind(const std::string& name) {
  if (name == "row") return ShardingKind::kRow;
  if (name == "table") return ShardingKind::kTable;
  return InvalidArgument("sharding: '" + name + "' is not one of row, table");
}

const char* ShardingKindName(ShardingKind kind) { return kind == ShardingKind::kRow ? "row" : "table"; }

StatusOr<EmbeddingSharding> EmbeddingSharding::Make(ShardingKind kind, std::vector<int64_t> table_rows, int ranks) {
  if (ranks < 1) return InvalidArgument("embedding sharding: " + std::to_string(ranks) + " ranks");
  if (table_rows.empty()) return InvalidArgument("embedding sharding: no tables");
  EmbeddingSharding s;
  s.kind_ = kind;
  s.ranks_ = ranks;
  s.table_rows_ = std::move(table_rows);
  s.tables_of_.resize(static_cast<size_t>(ranks));
  const int64_t tables = s.num_tables();
  if (kind == ShardingKind::kRow) {
    for (int64_t t = 0; t < tables; ++t) {
      if (s.table_rows_[t] < ranks) {
        return InvalidArgument("row-wise sharding on " + std::to_string(ranks) + " ranks: table " +
                               std::to_string(t) + " has " + std::to_string(s.table_rows_[t]) +
                               " rows, fewer than the ranks, so a rank would hold none of it; use --sharding table");
      }
      for (auto& list : s.tables_of_) list.push_back(t);
    }
    return s;
  }
  if (tables < ranks) {
    return InvalidArgument("table-wise sharding on " + std::to_string(ranks) + " ranks: only " +
                           std::to_string(tables) + " tables, so a rank would hold none; use --sharding row");
  }
  // Largest first (ties: lower table), each to the least-loaded rank (ties:
  // lower rank).
  std::vector<int64_t> order(static_cast<size_t>(tables));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return s.table_rows_[a] > s.table_rows_[b]; });
  std::vector<int64_t> load(static_cast<size_t>(ranks), 0);
  s.table_owner_.assign(static_cast<size_t>(tables), 0);
  for (int64_t t : order) {
    const int r = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    s.table_owner_[t] = r;
    load[r] += s.table_rows_[t];
  }
  for (int64_t t = 0; t < tables; ++t) s.tables_of_[s.table_owner_[t]].push_back(t);
  return s;
}

std::vector<int64_t> EmbeddingSharding::ShardRows(int rank) const {
  std::vector<int64_t> rows;
  for (int64_t t : TablesOf(rank)) {
    const int64_t n = table_rows_[t];
    rows.push_back(kind_ == ShardingKind::kRow ? (n - rank + ranks_ - 1) / ranks_ : n);
  }
  return rows;
}

}  // namespace foresight::embed
