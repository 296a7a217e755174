#include "learned_rows_store.h"

#include <algorithm>

namespace foresight::trainer::internal {

StatusOr<std::unique_ptr<LearnedRowsStore>> LearnedRowsStore::Open(LearnedNodeTable* table) {
  FS_RETURN_IF_ERROR(table->PrepareReads());
  return std::unique_ptr<LearnedRowsStore>(new LearnedRowsStore(table));
}

StatusOr<storage::IoTicket> LearnedRowsStore::SubmitRead(const std::vector<storage::RowRequest>& reqs,
                                                         uint8_t* absent) {
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i].key < 0 || reqs[i].key >= num_rows()) {
      return OutOfRange("learned node features: key " + std::to_string(reqs[i].key) + " at position " +
                        std::to_string(i) + " is out of [0, " + std::to_string(num_rows()) + ")");
    }
  }
  if (absent != nullptr) std::fill(absent, absent + reqs.size(), uint8_t{0});  // dense: every row exists
  const Status s = table_->ReadEmbeddings(reqs);
  stats_.read_requests += static_cast<int64_t>(reqs.size());
  const storage::IoTicket t = next_ticket_++;
  done_.emplace(t, s);
  return t;
}

StatusOr<storage::IoTicket> LearnedRowsStore::SubmitWrite(const std::vector<storage::RowRequest>&) {
  return FailedPrecondition("learned node features: the evaluation view of the table is read-only");
}

Status LearnedRowsStore::Wait(storage::IoTicket ticket) {
  auto it = done_.find(ticket);
  if (it == done_.end()) return InvalidArgument("learned node features: unknown I/O ticket " + std::to_string(ticket));
  const Status s = it->second;
  done_.erase(it);
  return s;
}

}  // namespace foresight::trainer::internal
