// A read-only RowStore of learned node features' embeddings, f32 [N, DIM]:
// each read takes the rows from the table's own store and keeps their first
// DIM floats (never the optimizer state). Evaluation's layer-wise inference
// reads learned rows through it chunk by chunk, as it reads a features file,
// instead of holding all N rows in RAM. Reads are synchronous (complete in
// SubmitRead). Valid until the table trains again. Private to the trainer.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "foresight/storage/row_store.h"
#include "learned_input.h"

namespace foresight::trainer::internal {

class LearnedRowsStore final : public storage::RowStore {
 public:
  // Writes the table's dirty rows back first (LearnedNodeTable::PrepareReads).
  static StatusOr<std::unique_ptr<LearnedRowsStore>> Open(LearnedNodeTable* table);

  int64_t num_rows() const override { return table_->rows(); }
  bool writable() const override { return false; }
  std::string backend() const override { return "learned node features"; }
  StatusOr<storage::IoTicket> SubmitRead(const std::vector<storage::RowRequest>& reqs, uint8_t* absent) override;
  StatusOr<storage::IoTicket> SubmitWrite(const std::vector<storage::RowRequest>& reqs) override;
  Status Wait(storage::IoTicket ticket) override;
  Status Flush() override { return Status::OK(); }
  storage::RowStoreStats stats() const override { return stats_; }
  void ResetStats() override { stats_ = storage::RowStoreStats(); }

 private:
  explicit LearnedRowsStore(LearnedNodeTable* table) : RowStore(DType::kF32, table->dim()), table_(table) {}

  LearnedNodeTable* table_;
  storage::RowStoreStats stats_;
  storage::IoTicket next_ticket_ = 1;
  std::map<storage::IoTicket, Status> done_;  // submitted, not yet waited on
};

}  // namespace foresight::trainer::internal
