// InitialRowsStore: a dense row store that was filled with every row's
// seeded initial value when its table was created, wrapped so that the
// table never pays I/O to learn a value it can compute. It keeps one bit a
// row: written since creation. A row not written since still holds its
// initial value, a pure function of its key (initializer.h), so:
//   - a read of it is answered by the initialiser, with no I/O (a table's
//     first touch of each row, its compulsory miss, reads nothing);
//   - a write that leaves the rest of a block of the inner store
//     (write_block_rows()) to such rows carries their initial values along,
//     so the block is written whole, without the read of a
//     read-modify-write. Those rows keep their bits: the store still holds
//     their initial values.
// Every write goes through here (the table's, and a checkpoint's rows
// loaded through EmbeddingTable::store()), so the bits cannot go stale.
// A write carries at most 1 MiB of initial rows (the blocks past that are
// read-modify-written), so the fill costs no memory a budget would see.
//
// Only for stores without host_rows(): a reader of those would bypass the
// bits. Bits cost num_rows / 8 bytes.
//
// Thread safety: that of RowStore (Submit*/Wait/Flush from one thread at a
// time; stats() from any).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "foresight/storage/row_store.h"

namespace foresight::embed::internal {

class InitialRowsStore final : public storage::RowStore {
 public:
  // Writes row `key`'s initial value (row_bytes() bytes) into `row`;
  // thread-safe.
  using RowInitializer = std::function<void(int64_t key, void* row)>;

  // `inner`: dense, every row holding its initial value.
  InitialRowsStore(std::unique_ptr<storage::RowStore> inner, RowInitializer init);

  int64_t num_rows() const override { return inner_->num_rows(); }
  bool writable() const override { return inner_->writable(); }
  std::string backend() const override { return inner_->backend(); }
  int64_t write_block_rows() const override { return inner_->write_block_rows(); }
  StatusOr<storage::IoTicket> SubmitRead(const std::vector<storage::RowRequest>& reqs, uint8_t* absent) override;
  StatusOr<storage::IoTicket> SubmitWrite(const std::vector<storage::RowRequest>& reqs) override;
  Status Wait(storage::IoTicket ticket) override;
  Status Flush() override;
  // The inner store's counters; rows_initialized counts the reads answered
  // here (also counted in read_requests).
  storage::RowStoreStats stats() const override;
  void ResetStats() override;

  // Whether row `key` was written since creation.
  bool written(int64_t key) const { return (written_[static_cast<size_t>(key >> 6)] >> (key & 63)) & 1; }

 private:
  struct Ticket {
    storage::IoTicket inner = 0;  // 0: nothing went to the inner store
    std::vector<uint8_t> fill;    // writes: initial rows completing blocks
    // reads: where the inner submission's absent flags go
    uint8_t* absent = nullptr;
    std::vector<uint8_t> inner_absent;
    std::vector<uint32_t> positions;
  };
  void MarkWritten(int64_t key) { written_[static_cast<size_t>(key >> 6)] |= uint64_t{1} << (key & 63); }
  // The initial rows that complete the blocks `reqs` touch, when every
  // other row of such a block is unwritten: keys into *fill_keys.
  void BlockFill(const std::vector<storage::RowRequest>& reqs, std::vector<int64_t>* fill_keys) const;

  std::unique_ptr<storage::RowStore> inner_;
  RowInitializer init_;
  std::vector<uint64_t> written_;
  std::unordered_map<storage::IoTicket, Ticket> tickets_;
  storage::IoTicket next_ticket_ = 1;
  std::atomic<int64_t> rows_initialized_{0};
};

}  // namespace foresight::embed::internal
