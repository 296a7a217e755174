// External-memory CSR construction: sorted runs of (dst, src) pairs, spilled
// to unlinked temp files when the budget is reached, then one k-way merge
// that drops duplicates and streams indptr / indices out.
#include "foresight/graph/csr_builder.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <utility>

#include "foresight/core/progress.h"
#include "foresight/core/test_kill_point.h"
#include "foresight/storage/npy.h"

namespace foresight::graph {
namespace {

// Sort chunks of this many edges in parallel, then merge pairwise. A fixed
// grain keeps the work split independent of the thread count.
constexpr int64_t kSortGrain = int64_t{1} << 18;
// Output rows are buffered in blocks of this many elements before Append.
constexpr size_t kOutBlock = size_t{1} << 16;

std::string TempBase(const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* t = std::getenv("TMPDIR");
  return t && *t ? std::string(t) : std::string("/tmp");
}

}  // namespace

// Reads one sorted run sequentially, from a temp file or from memory.
class CsrBuilder::RunReader {
 public:
  RunReader(int fd, int64_t count, size_t buffer_edges)
      : fd_(fd), count_(count), buf_(std::max<size_t>(1, buffer_edges)) {}
  RunReader(const Edge* mem, int64_t count) : mem_(mem), count_(count) {}

  // Loads the next edge into *e; false at the end of the run.
  StatusOr<bool> Next(Edge* e) {
    if (consumed_ >= count_) return false;
    if (mem_ != nullptr) {
      *e = mem_[consumed_++];
      return true;
    }
    if (pos_ == filled_) FS_RETURN_IF_ERROR(Refill());
    *e = buf_[pos_++];
    ++consumed_;
    return true;
  }

 private:
  Status Refill() {
    const int64_t want = std::min<int64_t>(static_cast<int64_t>(buf_.size()), count_ - consumed_);
    size_t bytes = static_cast<size_t>(want) * sizeof(Edge);
    char* p = reinterpret_cast<char*>(buf_.data());
    uint64_t off = static_cast<uint64_t>(consumed_) * sizeof(Edge);
    while (bytes > 0) {
      const ssize_t r = pread(fd_, p, bytes, static_cast<off_t>(off));
      if (r < 0) {
        if (errno == EINTR) continue;
        return ErrnoError("pread(edge run file)", errno);
      }
      if (r == 0) return DataLoss("edge run file: unexpected end of file");
      p += r;
      off += static_cast<uint64_t>(r);
      bytes -= static_cast<size_t>(r);
    }
    pos_ = 0;
    filled_ = static_cast<size_t>(want);
    return Status::OK();
  }

  int fd_ = -1;
  const Edge* mem_ = nullptr;
  int64_t count_ = 0;
  int64_t consumed_ = 0;
  std::vector<Edge> buf_;
  size_t pos_ = 0;
  size_t filled_ = 0;
};

CsrBuilder::CsrBuilder(const CsrBuildOptions& options)
    : options_(options), pool_(options.pool ? options.pool : DefaultThreadPool()) {
  capacity_ = CapacityFor(0);
}

int64_t CsrBuilder::CapacityFor(size_t held) const {
  // Each buffered edge costs two Edges: its slot and the merge sort's scratch.
  const size_t left = options_.memory_budget_bytes > held ? options_.memory_budget_bytes - held : 0;
  return std::max<int64_t>(1024, static_cast<int64_t>(left / (2 * sizeof(Edge))));
}

Status CsrBuilder::ChargeHeldBytes(size_t bytes) {
  if (stats_.input_edges > 0 || finished_) {
    return FailedPrecondition("CsrBuilder::ChargeHeldBytes after the first edge: the buffer is already sized");
  }
  held_ += bytes;
  capacity_ = CapacityFor(held_);
  return Status::OK();
}

CsrBuilder::~CsrBuilder() {
  for (int fd : run_fds_) close(fd);
}

StatusOr<std::unique_ptr<CsrBuilder>> CsrBuilder::Create(const CsrBuildOptions& options) {
  if (options.memory_budget_bytes == 0) {
    return InvalidArgument("CsrBuilder: memory_budget_bytes must be > 0");
  }
  return std::unique_ptr<CsrBuilder>(new CsrBuilder(options));
}

Status CsrBuilder::Push(int64_t src, int64_t dst) {
  if (size_ == capacity_) FS_RETURN_IF_ERROR(SpillRun());
  if (static_cast<int64_t>(buf_.size()) == size_) {
    // Grow geometrically up to the budget: small graphs never touch 1 GiB.
    const int64_t grown = std::min<int64_t>(capacity_, std::max<int64_t>(size_ * 2, 1 << 16));
    buf_.resize(static_cast<size_t>(grown));
  }
  buf_[static_cast<size_t>(size_++)] = Edge{dst, src};
  return Status::OK();
}

Status CsrBuilder::Add(int64_t src, int64_t dst) {
  if (finished_) return FailedPrecondition("CsrBuilder::Add after Finish");
  if (src < 0 || dst < 0) {
    return InvalidArgument("CsrBuilder: negative node id in edge " + std::to_string(src) + " -> " +
                           std::to_string(dst));
  }
  ++stats_.input_edges;
  max_id_ = std::max(max_id_, std::max(src, dst));
  if (src == dst) {
    if (!options_.keep_self_loops) {
      ++stats_.self_loops_dropped;
      return Status::OK();
    }
    return Push(src, dst);  // symmetrising a self loop gives itself
  }
  FS_RETURN_IF_ERROR(Push(src, dst));
  if (options_.undirected) FS_RETURN_IF_ERROR(Push(dst, src));
  return Status::OK();
}

Status CsrBuilder::AddBatch(const int64_t* src, const int64_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) FS_RETURN_IF_ERROR(Add(src[i], dst[i]));
  return Status::OK();
}

void CsrBuilder::SortBuffer() {
  const int64_t n = size_;
  auto less = [](const Edge& a, const Edge& b) { return a.dst != b.dst ? a.dst < b.dst : a.src < b.src; };
  Edge* data = buf_.data();
  pool_->ParallelFor(n, kSortGrain, [data, &less](int64_t b, int64_t e) { std::sort(data + b, data + e, less); });
  if (n > kSortGrain) {
    if (static_cast<int64_t>(scratch_.size()) < n) scratch_.resize(static_cast<size_t>(n));
    Edge* from = data;
    Edge* to = scratch_.data();
    for (int64_t width = kSortGrain; width < n; width *= 2) {
      const int64_t pairs = (n + 2 * width - 1) / (2 * width);
      pool_->ParallelFor(pairs, 1, [=, &less](int64_t pb, int64_t pe) {
        for (int64_t p = pb; p < pe; ++p) {
          const int64_t lo = p * 2 * width;
          const int64_t mid = std::min(n, lo + width);
          const int64_t hi = std::min(n, lo + 2 * width);
          std::merge(from + lo, from + mid, from + mid, from + hi, to + lo, less);
        }
      });
      std::swap(from, to);
    }
    if (from != data) std::copy(from, from + n, data);
  }
  if (!options_.keep_duplicates) {
    Edge* end = std::unique(data, data + n,
                            [](const Edge& a, const Edge& b) { return a.dst == b.dst && a.src == b.src; });
    const int64_t kept = end - data;
    stats_.duplicates_dropped += n - kept;
    size_ = kept;
  }
}

Status CsrBuilder::SpillRun() {
  SortBuffer();
  std::string path = TempBase(options_.temp_dir) + "/foresight-edges-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return ErrnoError("mkstemp(" + path + ")", errno);
  unlink(path.c_str());  // the open fd keeps it; nothing survives a crash
  run_fds_.push_back(fd);
  const char* p = reinterpret_cast<const char*>(buf_.data());
  size_t bytes = static_cast<size_t>(size_) * sizeof(Edge);
  while (bytes > 0) {
    const ssize_t w = write(fd, p, bytes);
    if (w < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      if (err == ENOSPC) return ResourceExhausted("write(edge run in " + TempBase(options_.temp_dir) + "): no space left on device");
      return ErrnoError("write(edge run in " + TempBase(options_.temp_dir) + ")", err);
    }
    p += w;
    bytes -= static_cast<size_t>(w);
  }
  run_sizes_.push_back(size_);
  ++stats_.num_runs;
  size_ = 0;
  // Tests kill here to check that a run's spill files die with it.
  TestKillPoint("edge-sort.run-spilled");
  return Status::OK();
}

Status CsrBuilder::Finish(int64_t num_nodes, const std::string& indptr_path, const std::string& indices_path) {
  if (finished_) return FailedPrecondition("CsrBuilder::Finish called twice");
  finished_ = true;
  if (num_nodes < 0) return InvalidArgument("CsrBuilder::Finish: num_nodes must be >= 0");
  if (max_id_ >= num_nodes) {
    return OutOfRange("edge list names node " + std::to_string(max_id_) + " but the graph has " +
                      std::to_string(num_nodes) + " nodes (ids must be in [0, " + std::to_string(num_nodes) + "))");
  }
  SortBuffer();
  std::vector<Edge>().swap(scratch_);

  const bool wide = num_nodes > INT32_MAX;
  FS_ASSIGN_OR_RETURN(auto indptr, storage::NpyWriter::Create(indptr_path, DType::kI64, {}));
  FS_ASSIGN_OR_RETURN(auto indices, storage::NpyWriter::Create(indices_path, wide ? DType::kI64 : DType::kI32, {}));

  // Readers: spilled runs share a quarter of the budget, plus the in-memory run.
  std::vector<std::unique_ptr<RunReader>> readers;
  const size_t k = run_fds_.size();
  if (k > 0) {
    const size_t per_run = std::clamp<size_t>(options_.memory_budget_bytes / 4 / (k * sizeof(Edge)), 1024, size_t{1} << 20);
    for (size_t r = 0; r < k; ++r) readers.push_back(std::make_unique<RunReader>(run_fds_[r], run_sizes_[r], per_run));
  }
  if (size_ > 0) readers.push_back(std::make_unique<RunReader>(buf_.data(), size_));

  using Item = std::pair<Edge, size_t>;
  auto greater = [](const Item& a, const Item& b) {
    if (a.first.dst != b.first.dst) return a.first.dst > b.first.dst;
    if (a.first.src != b.first.src) return a.first.src > b.first.src;
    return a.second > b.second;
  };
  std::priority_queue<Item, std::vector<Item>, decltype(greater)> heap(greater);
  for (size_t r = 0; r < readers.size(); ++r) {
    Edge e;
    FS_ASSIGN_OR_RETURN(bool more, readers[r]->Next(&e));
    if (more) heap.push({e, r});
  }

  std::vector<int64_t> ptr_block;
  ptr_block.reserve(kOutBlock);
  std::vector<int32_t> idx32;
  std::vector<int64_t> idx64;
  if (wide) idx64.reserve(kOutBlock); else idx32.reserve(kOutBlock);
  auto flush_ptr = [&]() -> Status {
    Status s = indptr->Append(ptr_block.data(), static_cast<int64_t>(ptr_block.size()));
    ptr_block.clear();
    return s;
  };
  auto flush_idx = [&]() -> Status {
    Status s = wide ? indices->Append(idx64.data(), static_cast<int64_t>(idx64.size()))
                    : indices->Append(idx32.data(), static_cast<int64_t>(idx32.size()));
    idx32.clear();
    idx64.clear();
    return s;
  };

  // The merge reads every buffered edge once: its progress, with rate and
  // time left (on a billion edges it takes minutes).
  int64_t total = size_;
  for (int64_t n : run_sizes_) total += n;
  ProgressOptions po;
  po.unit = "edges";
  Progress progress("merge sorted edge runs", total, po);
  int64_t popped = 0;
  int64_t count = 0;     // edges written
  int64_t next_row = 0;  // next indptr entry to write
  bool have_prev = false;
  Edge prev{0, 0};
  while (!heap.empty()) {
    const auto [e, r] = heap.top();
    heap.pop();
    if (++popped == kOutBlock) {
      progress.Advance(popped);
      popped = 0;
    }
    Edge nxt;
    FS_ASSIGN_OR_RETURN(bool more, readers[r]->Next(&nxt));
    if (more) heap.push({nxt, r});
    if (!options_.keep_duplicates && have_prev && prev.dst == e.dst && prev.src == e.src) {
      ++stats_.duplicates_dropped;  // duplicates that sat in different runs
      continue;
    }
    have_prev = true;
    prev = e;
    while (next_row <= e.dst) {
      ptr_block.push_back(count);
      ++next_row;
      if (ptr_block.size() == kOutBlock) FS_RETURN_IF_ERROR(flush_ptr());
    }
    if (wide) idx64.push_back(e.src); else idx32.push_back(static_cast<int32_t>(e.src));
    ++count;
    if (idx32.size() + idx64.size() == kOutBlock) FS_RETURN_IF_ERROR(flush_idx());
  }
  while (next_row <= num_nodes) {
    ptr_block.push_back(count);
    ++next_row;
    if (ptr_block.size() == kOutBlock) FS_RETURN_IF_ERROR(flush_ptr());
  }
  FS_RETURN_IF_ERROR(flush_ptr());
  FS_RETURN_IF_ERROR(flush_idx());
  stats_.num_edges = count;
  std::vector<Edge>().swap(buf_);
  for (int fd : run_fds_) close(fd);
  run_fds_.clear();
  FS_RETURN_IF_ERROR(indptr->Finish());
  FS_RETURN_IF_ERROR(indices->Finish());
  progress.Advance(popped);
  progress.Finish(std::to_string(count) + " edges written, " + std::to_string(stats_.num_runs) + " runs merged");
  return Status::OK();
}

}  // namespace foresight::graph
