#include "foresight/core/page_shadow.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "foresight/core/thread_pool.h"

namespace foresight {

namespace {

int64_t SystemPageSize() { return static_cast<int64_t>(::sysconf(_SC_PAGESIZE)); }

std::string Errno(int err) { return std::strerror(err); }

}  // namespace

StatusOr<MappedFile> FindMappedFile(const void* p, size_t bytes, const std::string& what) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t end = begin + std::max<size_t>(bytes, 1);
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) return IoError(what + ": cannot read /proc/self/maps");
  MappedFile found;
  uintptr_t need = begin;  // first byte not yet covered
  unsigned long long inode_seen = 0;
  unsigned long long next_offset = 0;  // the file offset `need` must map
  // Lines are sorted by address: "start-end perms offset dev inode path".
  char line[4096 + 256];
  while (need < end && std::fgets(line, sizeof(line), f) != nullptr) {
    unsigned long long start = 0, stop = 0, offset = 0, inode = 0;
    char perms[8] = {0};
    char dev[32] = {0};
    int path_at = 0;
    if (std::sscanf(line, "%llx-%llx %7s %llx %31s %llu %n", &start, &stop, perms, &offset, dev, &inode,
                    &path_at) != 6) {
      continue;
    }
    if (stop <= need) continue;
    if (start > need) break;  // a hole
    if (perms[0] != 'r' || perms[1] != '-' || perms[3] != 's' || inode == 0) break;
    const unsigned long long at = offset + (need - start);
    if (inode_seen == 0) {
      inode_seen = inode;
      found.offset = static_cast<int64_t>(at);
      std::string path(line + path_at);
      while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
      found.path = path;
    } else if (inode != inode_seen || at != next_offset) {
      break;  // another file, or another part of it
    }
    next_offset = offset + (stop - start);
    need = stop;
  }
  std::fclose(f);
  if (need < end || found.path.empty() || found.path[0] != '/') {
    return FailedPrecondition(what + ": its bytes are not one read-only shared mapping of one file (expected a "
                                     "dataset array mapped from its .npy file)");
  }
  const std::string deleted = " (deleted)";
  if (found.path.size() > deleted.size() &&
      found.path.compare(found.path.size() - deleted.size(), deleted.size(), deleted) == 0) {
    return FailedPrecondition(what + ": its file " + found.path + " was removed after it was mapped");
  }
  struct stat st;
  if (::stat(found.path.c_str(), &st) != 0 || static_cast<unsigned long long>(st.st_ino) != inode_seen) {
    return FailedPrecondition(what + ": " + found.path + " is no longer the file that was mapped (replaced or "
                                     "removed since)");
  }
  return found;
}

StatusOr<std::unique_ptr<PageShadow>> PageShadow::Create(const Tensor& array, const std::string& what,
                                                         bool guard) {
  if (!array.defined() || !array.device().is_cpu()) {
    return InvalidArgument(what + ": a page shadow needs a defined host array");
  }
  FS_RETURN_IF_ERROR(CheckContiguous(array, what.c_str()));
  const int64_t bytes = static_cast<int64_t>(array.nbytes());
  std::unique_ptr<PageShadow> s(new PageShadow());
  s->what_ = what;
  s->guard_ = guard;
  s->page_ = SystemPageSize();
  FS_ASSIGN_OR_RETURN(MappedFile file, FindMappedFile(array.raw_data(), static_cast<size_t>(bytes), what));
  s->path_ = file.path;
  s->fd_ = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (s->fd_ < 0) return IoError(what + ": open " + file.path + ": " + Errno(errno));
  struct stat st;
  if (::fstat(s->fd_, &st) != 0) return IoError(what + ": fstat " + file.path + ": " + Errno(errno));
  s->file_size_ = static_cast<int64_t>(st.st_size);
  if (file.offset + bytes > s->file_size_) {
    return FailedPrecondition(what + ": " + file.path + " has " + std::to_string(s->file_size_) +
                              " bytes, fewer than the mapped array's end at " + std::to_string(file.offset + bytes) +
                              " (truncated since it was mapped)");
  }
  // Address and file offset agree modulo the page size (mmap maps whole
  // pages), so the shadow starts at the array's first page.
  s->array_offset_ = file.offset % s->page_;
  s->file_base_ = file.offset - s->array_offset_;
  const int64_t pages = (s->array_offset_ + bytes + s->page_ - 1) / s->page_;
  s->map_bytes_ = std::max<int64_t>(1, pages) * s->page_;
  void* base = ::mmap(nullptr, static_cast<size_t>(s->map_bytes_), guard ? PROT_NONE : PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return IoError(what + ": mmap of a " + std::to_string(s->map_bytes_) + "-byte shadow: " + Errno(errno));
  }
  // 4 KiB pages only: a huge page would make a one-page load resident as
  // 2 MiB, the very thing the shadow avoids. Advice: without THP there is
  // nothing to refuse.
  (void)::madvise(base, static_cast<size_t>(s->map_bytes_), MADV_NOHUGEPAGE);
  s->base_ = static_cast<char*>(base);
  const size_t map_bytes = static_cast<size_t>(s->map_bytes_);
  std::shared_ptr<void> owner(base, [map_bytes](void* b) { ::munmap(b, map_bytes); });
  s->tensor_ = Tensor::FromBlob(s->base_ + s->array_offset_, array.shape(), array.dtype(), Device::Cpu(),
                                std::move(owner));
  s->bits_.assign(static_cast<size_t>((pages + 63) / 64), 0);
  return s;
}

PageShadow::~PageShadow() {
  // The mapping goes with the last view of tensor_; its pages go now.
  if (base_ != nullptr) Release();
  if (fd_ >= 0) ::close(fd_);
}

void PageShadow::Want(int64_t begin, int64_t end) {
  if (end <= begin) return;
  const int64_t first = (array_offset_ + begin) / page_;
  const int64_t last = (array_offset_ + end - 1) / page_;
  for (int64_t k = first; k <= last; ++k) {
    uint64_t& word = bits_[static_cast<size_t>(k >> 6)];
    const uint64_t bit = uint64_t{1} << (k & 63);
    if ((word & bit) != 0) continue;
    word |= bit;
    queued_.push_back(k);
  }
}

std::vector<std::pair<int64_t, int64_t>> PageShadow::Runs(std::vector<int64_t>* pages) {
  std::sort(pages->begin(), pages->end());
  std::vector<std::pair<int64_t, int64_t>> runs;  // (first page, count)
  for (int64_t k : *pages) {
    if (!runs.empty() && runs.back().first + runs.back().second == k) {
      ++runs.back().second;
    } else {
      runs.emplace_back(k, 1);
    }
  }
  return runs;
}

Status PageShadow::ReadRun(int64_t first, int64_t count) const {
  char* dst = base_ + first * page_;
  const int64_t bytes = count * page_;
  if (guard_ && ::mprotect(dst, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE) != 0) {
    return IoError(what_ + ": mprotect: " + Errno(errno));
  }
  int64_t off = file_base_ + first * page_;
  // The last page may end past the file (the rest stays zero).
  const int64_t want = std::min(bytes, file_size_ - off);
  int64_t done = 0;
  while (done < want) {
    const ssize_t r = ::pread(fd_, dst + done, static_cast<size_t>(want - done), static_cast<off_t>(off + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return IoError(what_ + ": pread " + path_ + " at " + std::to_string(off + done) + ": " + Errno(errno));
    }
    if (r == 0) {
      return DataLoss(what_ + ": " + path_ + " ended at " + std::to_string(off + done) + ", expected " +
                      std::to_string(off + want) + " bytes (truncated since it was opened)");
    }
    done += r;
  }
  if (guard_ && ::mprotect(dst, static_cast<size_t>(bytes), PROT_READ) != 0) {
    return IoError(what_ + ": mprotect: " + Errno(errno));
  }
  return Status::OK();
}

Status PageShadow::Load(const ExecContext& ctx) {
  if (queued_.empty()) return Status::OK();
  // Queued pages count as loaded from here on, so a failed load's pages
  // are still given back by Release.
  loaded_.insert(loaded_.end(), queued_.begin(), queued_.end());
  peak_pages_ = std::max(peak_pages_, loaded_pages());
  const std::vector<std::pair<int64_t, int64_t>> runs = Runs(&queued_);
  queued_.clear();
  std::atomic<bool> failed{false};
  std::vector<Status> errors(runs.size());
  auto read = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e && !failed.load(std::memory_order_relaxed); ++i) {
      errors[static_cast<size_t>(i)] = ReadRun(runs[static_cast<size_t>(i)].first, runs[static_cast<size_t>(i)].second);
      if (!errors[static_cast<size_t>(i)].ok()) failed.store(true, std::memory_order_relaxed);
    }
  };
  const int64_t n = static_cast<int64_t>(runs.size());
  // Page-cache hits take a microsecond or two each: threads pay from a
  // few dozen runs on; a cold disk read overlaps with the others.
  if (ctx.pool != nullptr && n >= 32) {
    ctx.pool->ParallelFor(n, 8, read);
  } else {
    read(0, n);
  }
  for (const Status& s : errors) FS_RETURN_IF_ERROR(s);
  return Status::OK();
}

void PageShadow::Release() {
  for (int64_t k : queued_) bits_[static_cast<size_t>(k >> 6)] &= ~(uint64_t{1} << (k & 63));
  queued_.clear();
  if (loaded_.empty()) return;
  for (const auto& [first, count] : Runs(&loaded_)) {
    void* p = base_ + first * page_;
    const size_t bytes = static_cast<size_t>(count * page_);
    // Private anonymous pages: DONTNEED frees them (a later read sees
    // zeros until loaded again). It cannot fail on our own mapping.
    (void)::madvise(p, bytes, MADV_DONTNEED);
    if (guard_) (void)::mprotect(p, bytes, PROT_NONE);
    for (int64_t k = first; k < first + count; ++k) bits_[static_cast<size_t>(k >> 6)] &= ~(uint64_t{1} << (k & 63));
  }
  loaded_.clear();
}

}  // namespace foresight
