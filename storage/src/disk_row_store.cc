// The disk backend: a 2-D .npy read and written with O_DIRECT through an
// IoEngine (io_uring, or pread when the kernel refuses io_uring).
//
// A submission's rows are sorted by file offset and grouped into extents:
// each row's span rounded out to the alignment, neighbouring or overlapping
// spans merged while the extent stays within max_coalesce_bytes (for reads,
// also spans up to max_read_gap_bytes apart: the gap is read and dropped;
// on a disk bound by operations a second small op costs more). Extents
// become ops queued FIFO across submissions; up to io_depth are in flight,
// each owning one slot of a fixed pool of aligned bounce buffers. A read
// copies its rows out of the slot on completion. A write copies rows into
// the slot and writes the extent; when the rows do not cover it (gaps, or
// partial blocks) it first reads the extent back (read-modify-write).
//
// Ordering: ops are issued strictly in queue order, and an op that overlaps
// an in-flight op, where either writes, waits until that one completes.
// So a read submitted after a write of the same key sees it, and two
// writes to rows sharing a block never lose each other's bytes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <numeric>
#include <unordered_map>

#include "file_util.h"
#include "foresight/core/logging.h"
#include "io_engine.h"
#include "row_store_internal.h"

namespace foresight::storage::internal {
namespace {

constexpr uint64_t kMinAlignment = 4096;

uint64_t RoundDown(uint64_t x, uint64_t a) { return x / a * a; }
uint64_t RoundUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// The O_DIRECT alignment of `fd`: its direct-I/O offset and memory
// alignment when the kernel reports them (statx), at least 4096.
uint64_t DirectIoAlignment(int fd) {
  uint64_t align = kMinAlignment;
#ifdef STATX_DIOALIGN
  struct statx sx;
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
      (sx.stx_mask & STATX_DIOALIGN) != 0) {
    align = std::max<uint64_t>(align, sx.stx_dio_offset_align);
    align = std::max<uint64_t>(align, sx.stx_dio_mem_align);
  }
#endif
  uint64_t p = 1;
  while (p < align) p <<= 1;
  return p;
}

void WarnPreadFallbackOnce(const Status& why) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) {
    FS_LOG(WARNING) << "io_uring is not available (" << why.message()
                    << "); the disk row store uses pread/pwrite, one request at a time";
  }
}

struct AlignedFree {
  void operator()(char* p) const { std::free(p); }
};

class DiskRowStore final : public RowStore {
 public:
  DiskRowStore(DType dtype, int64_t row_width) : RowStore(dtype, row_width) {}
  ~DiskRowStore() override;

  Status Init(const RowStoreOptions& options, const NpyInfo& info);

  int64_t num_rows() const override { return num_rows_; }
  bool writable() const override { return writable_; }
  std::string backend() const override {
    return direct_ ? std::string("disk (") + engine_->name() + ")"
                   : std::string("disk (buffered, ") + engine_->name() + ")";
  }
  StatusOr<IoTicket> SubmitRead(const std::vector<RowRequest>& reqs, uint8_t* absent) override;
  StatusOr<IoTicket> SubmitWrite(const std::vector<RowRequest>& reqs) override;
  Status Wait(IoTicket ticket) override;
  Status Flush() override;
  RowStoreStats stats() const override { return stats_.Snapshot(); }
  void ResetStats() override { stats_.Reset(); }
  int64_t write_block_rows() const override { return write_block_rows_; }

 private:
  // One row of a submission, in file-offset order.
  struct Piece {
    uint64_t offset;  // file offset of the row
    char* data;       // the caller's buffer
  };
  struct Submission {
    std::vector<Piece> pieces;
    int64_t remaining = 0;  // ops not yet completed
    Status status;          // the first error
  };
  enum class Phase : uint8_t { kRead, kRmwRead, kWrite };
  struct Op {
    Submission* sub = nullptr;
    uint32_t piece_begin = 0, piece_end = 0;
    uint64_t start = 0;      // aligned file offset
    uint64_t end = 0;        // aligned end (what a read asks for)
    uint64_t need_end = 0;   // bytes up to here must be read (rows; the file end for RMW)
    uint64_t write_end = 0;  // writes: end clipped to the file's size
    bool write = false;
    bool rmw = false;        // a write whose rows leave gaps in [start, write_end)
    Phase phase = Phase::kRead;
  };

  StatusOr<IoTicket> Enqueue(const std::vector<RowRequest>& reqs, bool write);
  // Issues queued ops while slots are free and ordering allows; reaps ready
  // completions first so the queue keeps moving between Waits.
  Status Pump();
  bool Conflicts(const Op& op) const;
  Status Issue(int slot);
  Status HandleCompletion(const IoCompletion& c);
  void Finish(int slot, Status s);
  // Blocks for completions and handles every ready one: as many as `needed`
  // when no op waits for a slot (one wake-up for a submission's tail), else
  // an eighth of the depth, so freed slots refill together; never more
  // than are in flight. Waking per completion cost a syscall and a context
  // switch per read (160k an epoch on the community graph).
  Status WaitCompletions(int64_t needed);
  Status Drain();
  int FdFor(const Op& op) const;

  std::string path_;
  int64_t num_rows_ = 0;
  bool writable_ = false;
  bool direct_ = true;
  uint64_t data_offset_ = 0;
  uint64_t file_size_ = 0;
  uint64_t align_ = kMinAlignment;
  uint64_t coalesce_limit_ = 0;  // largest merged extent; 0 = one row per op
  uint64_t read_gap_ = 0;        // reads: unneeded bytes an extent may span to join the next
  size_t buffer_bytes_ = 0;
  int64_t write_block_rows_ = 0;  // rows per aligned block when they tile it (direct, writable)
  ScopedFd fd_;           // O_DIRECT (or buffered when !direct_)
  ScopedFd buffered_fd_;  // writable direct stores: unaligned writes of the file's tail
  std::unique_ptr<char, AlignedFree> pool_;
  std::unique_ptr<IoEngine> engine_;

  std::vector<Op> slots_;  // in-flight op per bounce buffer
  std::vector<bool> busy_;
  std::vector<int> free_slots_;
  int in_flight_ = 0;
  int writes_in_flight_ = 0;
  std::deque<Op> pending_;
  std::unordered_map<IoTicket, std::unique_ptr<Submission>> subs_;
  IoTicket next_ticket_ = 1;
  AtomicStats stats_;
};

DiskRowStore::~DiskRowStore() {
  // The kernel may still be writing into the bounce buffers.
  if (engine_ != nullptr) Drain().IgnoreError();
}

Status DiskRowStore::Init(const RowStoreOptions& options, const NpyInfo& info) {
  path_ = options.path;
  num_rows_ = info.shape[0];
  writable_ = options.writable;
  direct_ = options.direct_io;
  data_offset_ = info.data_offset;
  file_size_ = info.data_offset + info.data_bytes();
  if (options.io_depth < 1 || options.io_depth > 4096) {
    return InvalidArgument(path_ + ": io_depth must be in [1, 4096], got " +
                           std::to_string(options.io_depth));
  }
  if (options.max_coalesce_bytes < 0) {
    return InvalidArgument(path_ + ": max_coalesce_bytes must be >= 0, got " +
                           std::to_string(options.max_coalesce_bytes));
  }
  const int mode = writable_ ? O_RDWR : O_RDONLY;
  int fd = ::open(path_.c_str(), mode | O_CLOEXEC | (direct_ ? O_DIRECT : 0));
  if (fd < 0) {
    const int e = errno;
    if (direct_ && e == EINVAL) {
      return FailedPrecondition(
          path_ + ": the file system refuses O_DIRECT (open: " + std::strerror(e) +
          "; tmpfs?). Put the file on a disk file system, or use --feature-store mmap");
    }
    return ErrnoError("open " + path_, e);
  }
  fd_ = ScopedFd(fd);
  // The header was read through another descriptor; the size must still hold.
  FS_ASSIGN_OR_RETURN(uint64_t size, FileSizeOf(fd_.get(), path_));
  if (size != file_size_) {
    return DataLoss(path_ + ": expected " + std::to_string(file_size_) + " bytes, file has " +
                    std::to_string(size) + " (changed while opening?)");
  }
  if (direct_) {
    align_ = DirectIoAlignment(fd_.get());
    if (writable_) {
      FS_ASSIGN_OR_RETURN(buffered_fd_, OpenFile(path_, O_RDWR));
    }
  } else {
    align_ = 1;  // the page cache takes any offset
  }
  const uint64_t rb = static_cast<uint64_t>(row_bytes());
  coalesce_limit_ = RoundUp(static_cast<uint64_t>(options.max_coalesce_bytes), align_);
  if (options.max_read_gap_bytes < 0) {
    return InvalidArgument(path_ + ": max_read_gap_bytes must be >= 0, got " +
                           std::to_string(options.max_read_gap_bytes));
  }
  read_gap_ = static_cast<uint64_t>(options.max_read_gap_bytes);
  // A row spans at most RoundUp(rb) + one block when it straddles.
  const uint64_t row_span = RoundUp(rb, align_) + (align_ > 1 ? align_ : 0);
  buffer_bytes_ = static_cast<size_t>(RoundUp(std::max(coalesce_limit_, row_span), kMinAlignment));
  if (buffer_bytes_ > (size_t(1) << 30)) {
    return InvalidArgument(path_ + ": rows of " + std::to_string(rb) +
                           " bytes are too large for the disk row store (bounce buffers > 1 GiB)");
  }
  // Rows tile the blocks when a block holds whole rows and the rows start
  // on a block boundary (.npy data is padded to 4096); extents merge up to
  // coalesce_limit_, so a whole block's rows in one submission are one op.
  if (direct_ && writable_ && align_ % rb == 0 && data_offset_ % align_ == 0 && coalesce_limit_ >= align_) {
    write_block_rows_ = static_cast<int64_t>(align_ / rb);
  }
  const int depth = options.io_depth;
  const size_t pool_bytes = buffer_bytes_ * size_t(depth);
  pool_.reset(static_cast<char*>(std::aligned_alloc(std::max<size_t>(align_, kMinAlignment), pool_bytes)));
  if (pool_ == nullptr) {
    return ResourceExhausted(path_ + ": cannot allocate " + std::to_string(pool_bytes) +
                             " bytes of bounce buffers (io_depth " + std::to_string(depth) + ")");
  }
  if (!options.force_pread) {
    bool refused = false;
    auto e = MakeUringEngine(depth, pool_.get(), buffer_bytes_, depth, &refused);
    if (e.ok()) {
      engine_ = std::move(e).value();
    } else if (refused) {
      WarnPreadFallbackOnce(e.status());
    } else {
      return e.status().WithContext(path_);
    }
  }
  if (engine_ == nullptr) engine_ = MakePreadEngine();
  slots_.resize(depth);
  busy_.assign(depth, false);
  for (int i = depth - 1; i >= 0; --i) free_slots_.push_back(i);
  return Status::OK();
}

int DiskRowStore::FdFor(const Op& op) const {
  // An O_DIRECT write must end on a block boundary; the file's last,
  // partial block goes through the page cache (the kernel keeps the two
  // views coherent: direct I/O flushes and invalidates cached pages).
  if (op.phase == Phase::kWrite && direct_ && op.write_end % align_ != 0) {
    return buffered_fd_.get();
  }
  return fd_.get();
}

StatusOr<IoTicket> DiskRowStore::SubmitRead(const std::vector<RowRequest>& reqs,
                                            uint8_t* absent) {
  FS_RETURN_IF_ERROR(CheckDenseKeys(reqs, num_rows_, (path_ + ": read").c_str()));
  FS_RETURN_IF_ERROR(CheckBuffers(reqs));
  if (absent != nullptr && !reqs.empty()) std::memset(absent, 0, reqs.size());
  stats_.AddRead(static_cast<int64_t>(reqs.size()), 0, 0);
  return Enqueue(reqs, false);
}

StatusOr<IoTicket> DiskRowStore::SubmitWrite(const std::vector<RowRequest>& reqs) {
  if (!writable_) return FailedPrecondition(path_ + ": the disk row store is read-only");
  FS_RETURN_IF_ERROR(CheckDenseKeys(reqs, num_rows_, (path_ + ": write").c_str()));
  FS_RETURN_IF_ERROR(CheckBuffers(reqs));
  stats_.AddWrite(static_cast<int64_t>(reqs.size()), 0, 0);
  return Enqueue(reqs, true);
}

StatusOr<IoTicket> DiskRowStore::Enqueue(const std::vector<RowRequest>& reqs, bool write) {
  const uint64_t rb = static_cast<uint64_t>(row_bytes());
  auto sub = std::make_unique<Submission>();
  // Stable by offset: a key written twice in one submission keeps request
  // order, so the later request's bytes land last.
  std::vector<uint32_t> order(reqs.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return reqs[a].key < reqs[b].key; });
  sub->pieces.reserve(reqs.size());
  for (uint32_t i : order) {
    sub->pieces.push_back({data_offset_ + uint64_t(reqs[i].key) * rb,
                           static_cast<char*>(reqs[i].data)});
  }
  const size_t first_new = pending_.size();
  for (uint32_t p = 0; p < sub->pieces.size(); ++p) {
    const uint64_t off = sub->pieces[p].offset;
    const uint64_t a = RoundDown(off, align_);
    const uint64_t e = RoundUp(off + rb, align_);
    if (pending_.size() > first_new) {
      Op& op = pending_.back();
      // Reads may span a gap of unneeded bytes (read and dropped): on a
      // disk bound by operations a second, small op costs more than them.
      // Writes never do (the gap would need a read-modify-write).
      const uint64_t gap = write ? 0 : read_gap_;
      if (a <= op.end + gap && std::max(op.end, e) - op.start <= coalesce_limit_) {
        op.end = std::max(op.end, e);
        op.need_end = std::max(op.need_end, off + rb);
        op.piece_end = p + 1;
        continue;
      }
    }
    Op op;
    op.sub = sub.get();
    op.piece_begin = p;
    op.piece_end = p + 1;
    op.start = a;
    op.end = e;
    op.need_end = off + rb;
    op.write = write;
    pending_.push_back(op);
  }
  for (size_t i = first_new; i < pending_.size(); ++i) {
    Op& op = pending_[i];
    if (write) {
      op.write_end = std::min(op.end, file_size_);
      // Covered when the rows tile [start, write_end) without gaps.
      uint64_t covered = op.start;
      for (uint32_t p = op.piece_begin; p < op.piece_end && covered < op.write_end; ++p) {
        const uint64_t off = sub->pieces[p].offset;
        if (off > covered) break;
        covered = std::max(covered, off + rb);
      }
      op.rmw = covered < op.write_end;
      op.need_end = op.write_end;
      op.phase = op.rmw ? Phase::kRmwRead : Phase::kWrite;
    }
  }
  sub->remaining = static_cast<int64_t>(pending_.size() - first_new);
  const IoTicket t = next_ticket_++;
  subs_.emplace(t, std::move(sub));
  FS_RETURN_IF_ERROR(Pump());
  return t;
}

bool DiskRowStore::Conflicts(const Op& op) const {
  if (!op.write && writes_in_flight_ == 0) return false;
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (!busy_[s]) continue;
    const Op& o = slots_[s];
    if ((o.write || op.write) && o.start < op.end && op.start < o.end) return true;
  }
  return false;
}

Status DiskRowStore::Pump() {
  IoCompletion c;
  while (in_flight_ > 0 && engine_->TryReap(&c)) FS_RETURN_IF_ERROR(HandleCompletion(c));
  while (!pending_.empty() && !free_slots_.empty() && !Conflicts(pending_.front())) {
    const int slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot] = pending_.front();
    pending_.pop_front();
    busy_[slot] = true;
    ++in_flight_;
    if (slots_[slot].write) ++writes_in_flight_;
    FS_RETURN_IF_ERROR(Issue(slot));
  }
  return engine_->Submit();
}

Status DiskRowStore::Issue(int slot) {
  Op& op = slots_[slot];
  char* buf = pool_.get() + size_t(slot) * buffer_bytes_;
  IoOp io;
  io.buf = buf;
  io.buf_index = slot;
  io.tag = static_cast<uint64_t>(slot);
  io.offset = op.start;
  io.fd = FdFor(op);
  if (op.phase == Phase::kWrite) {
    const uint64_t rb = static_cast<uint64_t>(row_bytes());
    for (uint32_t p = op.piece_begin; p < op.piece_end; ++p) {
      const Piece& pc = op.sub->pieces[p];
      std::memcpy(buf + (pc.offset - op.start), pc.data, rb);
    }
    io.write = true;
    io.len = static_cast<uint32_t>(op.write_end - op.start);
    stats_.AddWrite(0, 1, io.len);
  } else {
    io.len = static_cast<uint32_t>(op.end - op.start);
    stats_.AddRead(0, 1, io.len);
  }
  return engine_->Queue(io);
}

void DiskRowStore::Finish(int slot, Status s) {
  Op& op = slots_[slot];
  if (!s.ok() && op.sub->status.ok()) op.sub->status = std::move(s);
  --op.sub->remaining;
  if (op.write) --writes_in_flight_;
  busy_[slot] = false;
  --in_flight_;
  free_slots_.push_back(slot);
}

Status DiskRowStore::HandleCompletion(const IoCompletion& c) {
  const int slot = static_cast<int>(c.tag);
  if (slot < 0 || slot >= static_cast<int>(slots_.size()) || !busy_[slot]) {
    return Internal(path_ + ": completion for an idle I/O slot " + std::to_string(c.tag));
  }
  Op& op = slots_[slot];
  const char* what = op.phase == Phase::kWrite ? "write" : "read";
  if (c.result < 0) {
    const int e = static_cast<int>(-c.result);
    const uint64_t len = (op.phase == Phase::kWrite ? op.write_end : op.end) - op.start;
    Status s = ErrnoError(std::string(engine_->name()) + " " + what + " of " +
                              std::to_string(len) + " bytes at offset " +
                              std::to_string(op.start) + " of " + path_,
                          e);
    if (e == EINVAL && direct_) {
      s = s.WithContext("O_DIRECT refused (alignment " + std::to_string(align_) +
                        "); use --feature-store mmap");
    }
    Finish(slot, std::move(s));
    return Status::OK();
  }
  const uint64_t got_end = op.start + static_cast<uint64_t>(c.result);
  if (op.phase == Phase::kWrite) {
    if (got_end < op.write_end) {
      Finish(slot, IoError(path_ + ": short write at offset " + std::to_string(op.start) + ": " +
                           std::to_string(c.result) + " of " +
                           std::to_string(op.write_end - op.start) + " bytes"));
    } else {
      Finish(slot, Status::OK());
    }
    return Status::OK();
  }
  if (got_end < op.need_end) {
    Finish(slot, DataLoss(path_ + ": short read at offset " + std::to_string(op.start) +
                          ": got " + std::to_string(c.result) + " of " +
                          std::to_string(op.need_end - op.start) +
                          " bytes (file truncated? expected " + std::to_string(file_size_) +
                          " bytes)"));
    return Status::OK();
  }
  if (op.phase == Phase::kRmwRead) {
    // The extent's current bytes are in the buffer; lay the rows over them.
    op.phase = Phase::kWrite;
    FS_RETURN_IF_ERROR(Issue(slot));
    return engine_->Submit();
  }
  const char* buf = pool_.get() + size_t(slot) * buffer_bytes_;
  const size_t rb = static_cast<size_t>(row_bytes());
  for (uint32_t p = op.piece_begin; p < op.piece_end; ++p) {
    const Piece& pc = op.sub->pieces[p];
    std::memcpy(pc.data, buf + (pc.offset - op.start), rb);
  }
  Finish(slot, Status::OK());
  return Status::OK();
}

Status DiskRowStore::WaitCompletions(int64_t needed) {
  if (in_flight_ == 0) return Internal(path_ + ": waiting with no I/O in flight");
  const int64_t chunk = pending_.empty() ? needed : std::max<int64_t>(1, static_cast<int64_t>(slots_.size()) / 8);
  const int n = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(in_flight_, chunk)));
  FS_RETURN_IF_ERROR(engine_->WaitReady(n));
  IoCompletion c;
  while (in_flight_ > 0 && engine_->TryReap(&c)) FS_RETURN_IF_ERROR(HandleCompletion(c));
  return Status::OK();
}

Status DiskRowStore::Wait(IoTicket ticket) {
  auto it = subs_.find(ticket);
  if (it == subs_.end()) {
    return InvalidArgument(path_ + ": Wait on unknown ticket " + std::to_string(ticket) +
                           " (never issued, or already waited on)");
  }
  Submission* sub = it->second.get();
  while (sub->remaining > 0) {
    FS_RETURN_IF_ERROR(Pump());
    if (sub->remaining == 0) break;
    FS_RETURN_IF_ERROR(WaitCompletions(sub->remaining));
  }
  Status s = std::move(sub->status);
  subs_.erase(it);
  return s;
}

Status DiskRowStore::Drain() {
  while (!pending_.empty() || in_flight_ > 0) {
    FS_RETURN_IF_ERROR(Pump());
    if (in_flight_ > 0) FS_RETURN_IF_ERROR(WaitCompletions(in_flight_));
  }
  return Status::OK();
}

Status DiskRowStore::Flush() {
  FS_RETURN_IF_ERROR(Drain());
  if (!writable_) return Status::OK();
  // fsync covers the inode: direct writes' metadata and the buffered tail.
  if (::fdatasync(fd_.get()) != 0) return ErrnoError("fdatasync " + path_, errno);
  return Status::OK();
}

}  // namespace

StatusOr<std::unique_ptr<RowStore>> OpenDiskRowStore(const RowStoreOptions& options) {
  FS_ASSIGN_OR_RETURN(NpyInfo info, PrepareDenseFile(options));
  auto store = std::make_unique<DiskRowStore>(info.dtype, info.shape[1]);
  FS_RETURN_IF_ERROR(store->Init(options, info));
  return std::unique_ptr<RowStore>(std::move(store));
}

}  // namespace foresight::storage::internal
