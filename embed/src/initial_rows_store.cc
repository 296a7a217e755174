#include "initial_rows_store.h"

#include <algorithm>
#include <string>
#include <utility>

namespace foresight::embed::internal {
namespace {
// The initial rows one write may carry. Only one write is in flight at a
// time (Submit then Wait), so this bounds the fill's memory: a flush of
// tens of thousands of scattered dirty rows would otherwise carry up to 15
// of them per row (a 4 KiB block of 256-byte rows). Blocks past it are
// read-modify-written as before.
constexpr int64_t kMaxFillBytes = int64_t{1} << 20;
}  // namespace

InitialRowsStore::InitialRowsStore(std::unique_ptr<storage::RowStore> inner, RowInitializer init)
    : RowStore(inner->dtype(), inner->row_width()),
      inner_(std::move(inner)),
      init_(std::move(init)),
      written_(static_cast<size_t>((std::max<int64_t>(inner_->num_rows(), 0) + 63) / 64), 0) {}

StatusOr<storage::IoTicket> InitialRowsStore::SubmitRead(const std::vector<storage::RowRequest>& reqs,
                                                         uint8_t* absent) {
  const int64_t n = num_rows();
  Ticket t;
  t.absent = absent;
  std::vector<storage::RowRequest> forward;
  forward.reserve(reqs.size());
  int64_t initialized = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    const int64_t key = reqs[i].key;
    // A bad key or buffer is the inner store's to report.
    if (key < 0 || key >= n || reqs[i].data == nullptr || written(key)) {
      forward.push_back(reqs[i]);
      t.positions.push_back(static_cast<uint32_t>(i));
      continue;
    }
    init_(key, reqs[i].data);
    if (absent != nullptr) absent[i] = 0;
    ++initialized;
  }
  if (!forward.empty()) {
    t.inner_absent.assign(forward.size(), 0);
    FS_ASSIGN_OR_RETURN(t.inner, inner_->SubmitRead(forward, absent != nullptr ? t.inner_absent.data() : nullptr));
  }
  rows_initialized_.fetch_add(initialized, std::memory_order_relaxed);
  const storage::IoTicket id = next_ticket_++;
  tickets_.emplace(id, std::move(t));
  return id;
}

void InitialRowsStore::BlockFill(const std::vector<storage::RowRequest>& reqs, std::vector<int64_t>* fill_keys) const {
  const int64_t per_block = inner_->write_block_rows();
  if (per_block <= 1) return;
  const int64_t n = num_rows();
  const size_t max_fill = static_cast<size_t>(std::max<int64_t>(1, kMaxFillBytes / row_bytes()));
  std::vector<int64_t> keys;
  keys.reserve(reqs.size());
  for (const storage::RowRequest& r : reqs) {
    if (r.key < 0 || r.key >= n) return;  // the inner store refuses the submission
    keys.push_back(r.key);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (size_t i = 0; i < keys.size();) {
    const int64_t first = keys[i] / per_block * per_block;
    const int64_t end = std::min(n, first + per_block);
    size_t j = i;
    while (j < keys.size() && keys[j] < end) ++j;
    // keys[i, j) are this block's requested rows; the rest must be unwritten.
    const size_t mark = fill_keys->size();
    bool whole = true;
    size_t next = i;
    for (int64_t k = first; k < end && whole; ++k) {
      if (next < j && keys[next] == k) {
        ++next;
      } else if (written(k)) {
        whole = false;
      } else {
        fill_keys->push_back(k);
      }
    }
    if (!whole || fill_keys->size() > max_fill) {
      fill_keys->resize(mark);
      if (whole) return;  // the fill is full
    }
    i = j;
  }
}

StatusOr<storage::IoTicket> InitialRowsStore::SubmitWrite(const std::vector<storage::RowRequest>& reqs) {
  Ticket t;
  std::vector<int64_t> fill_keys;
  if (inner_->writable()) BlockFill(reqs, &fill_keys);
  const std::vector<storage::RowRequest>* forward = &reqs;
  std::vector<storage::RowRequest> with_fill;
  if (!fill_keys.empty()) {
    const size_t rb = static_cast<size_t>(row_bytes());
    t.fill.resize(fill_keys.size() * rb);
    with_fill.reserve(reqs.size() + fill_keys.size());
    with_fill = reqs;
    for (size_t f = 0; f < fill_keys.size(); ++f) {
      uint8_t* row = t.fill.data() + f * rb;
      init_(fill_keys[f], row);
      with_fill.push_back({fill_keys[f], row});
    }
    forward = &with_fill;
  }
  FS_ASSIGN_OR_RETURN(t.inner, inner_->SubmitWrite(*forward));
  // Queued: a later read of these keys must go to the inner store, which
  // orders it after this write.
  const int64_t n = num_rows();
  for (const storage::RowRequest& r : reqs) {
    if (r.key >= 0 && r.key < n) MarkWritten(r.key);
  }
  const storage::IoTicket id = next_ticket_++;
  tickets_.emplace(id, std::move(t));
  return id;
}

Status InitialRowsStore::Wait(storage::IoTicket ticket) {
  auto it = tickets_.find(ticket);
  if (it == tickets_.end()) {
    return InvalidArgument(backend() + ": Wait on unknown ticket " + std::to_string(ticket) +
                           " (never issued, or already waited on)");
  }
  Ticket t = std::move(it->second);
  tickets_.erase(it);
  if (t.inner == 0) return Status::OK();
  FS_RETURN_IF_ERROR(inner_->Wait(t.inner));
  if (t.absent != nullptr) {
    for (size_t j = 0; j < t.positions.size(); ++j) t.absent[t.positions[j]] = t.inner_absent[j];
  }
  return Status::OK();
}

Status InitialRowsStore::Flush() { return inner_->Flush(); }

storage::RowStoreStats InitialRowsStore::stats() const {
  storage::RowStoreStats s = inner_->stats();
  const int64_t initialized = rows_initialized_.load(std::memory_order_relaxed);
  s.rows_initialized += initialized;
  s.read_requests += initialized;
  return s;
}

void InitialRowsStore::ResetStats() {
  inner_->ResetStats();
  rows_initialized_.store(0, std::memory_order_relaxed);
}

}  // namespace foresight::embed::internal
