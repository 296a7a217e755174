// A RowStore over rows already addressable in this process's memory: an
// owned or borrowed host tensor (the memory backend) or a mapped .npy file
// (the mmap backend). Submissions complete inside Submit*: rows are copied
// with memcpy (over the ThreadPool for large batches). Private to storage.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "row_store_internal.h"

namespace foresight::storage::internal {

class HostRowStore final : public RowStore {
 public:
  // `base` holds num_rows * row_bytes bytes kept alive by `owner`.
  // `flush` makes writes durable (msync for a mapping; null for memory).
  HostRowStore(std::string backend, std::string name, DType dtype, int64_t row_width,
               char* base, int64_t num_rows, bool writable, std::shared_ptr<void> owner,
               std::function<Status()> flush);

  int64_t num_rows() const override { return num_rows_; }
  bool writable() const override { return writable_; }
  std::string backend() const override { return backend_; }
  StatusOr<IoTicket> SubmitRead(const std::vector<RowRequest>& reqs, uint8_t* absent) override;
  StatusOr<IoTicket> SubmitWrite(const std::vector<RowRequest>& reqs) override;
  Status Wait(IoTicket ticket) override { return tickets_.Take(ticket); }
  Status Flush() override { return flush_ ? flush_() : Status::OK(); }
  RowStoreStats stats() const override { return stats_.Snapshot(); }
  void ResetStats() override { stats_.Reset(); }
  Tensor host_rows() const override {
    if (base_ == nullptr) return Tensor();  // an empty file maps nothing
    return Tensor::FromBlob(base_, {num_rows_, row_width()}, dtype(), Device::Cpu(), owner_);
  }

 private:
  std::string backend_;
  std::string name_;  // for messages: the file, or "memory row store"
  char* base_;
  int64_t num_rows_;
  bool writable_;
  std::shared_ptr<void> owner_;
  std::function<Status()> flush_;
  AtomicStats stats_;
  SyncTickets tickets_;
};

}  // namespace foresight::storage::internal
