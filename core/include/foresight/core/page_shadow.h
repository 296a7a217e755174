// Reading a mapped file array page by page into anonymous memory, so that
// what a reader holds resident is exactly the 4 KiB pages it asked for.
//
// Why not the file mapping itself: a fault on a mapped file maps the page
// cache's whole folio, and kernels with large folios (6.x on ext4 and xfs)
// hold up to 2 MiB per folio, so touching one byte can add 2 MiB to the
// resident set (measured: about 1 MiB per touched page on a 763 MB file),
// whatever madvise says. A shadow is an anonymous mapping laid out like
// the array (its byte i is the array's byte i), filled by pread, one 4 KiB
// page at a time, and emptied with MADV_DONTNEED: anonymous pages are
// never grouped with their neighbours unless asked (MADV_NOHUGEPAGE).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight {

// The file behind a mapped range, found in /proc/self/maps.
struct MappedFile {
  std::string path;
  int64_t offset = 0;  // the file offset of the range's first byte
};
// FailedPrecondition naming `what` unless [p, p + bytes) lies in one
// read-only shared mapping of one file (possibly split into several
// contiguous entries by madvise) that still exists under its path.
StatusOr<MappedFile> FindMappedFile(const void* p, size_t bytes, const std::string& what);

class PageShadow {
 public:
  // A shadow of `array` (contiguous, host, in a read-only shared file
  // mapping: a dataset's mmap'd .npy array). With `guard`, pages not loaded
  // are PROT_NONE, so a read of one crashes instead of reading zeros (a
  // debug mode: each load and release changes protections, splitting the
  // mapping, so it is for tests, not for graphs of millions of pages).
  static StatusOr<std::unique_ptr<PageShadow>> Create(const Tensor& array, const std::string& what, bool guard);
  ~PageShadow();
  PageShadow(const PageShadow&) = delete;
  PageShadow& operator=(const PageShadow&) = delete;

  // The array's shape and dtype over the shadow: reads of loaded pages see
  // the file's bytes; others see zeros (or fault, with guard). Keeps the
  // shadow alive.
  const Tensor& tensor() const { return tensor_; }

  // Queues every page holding a byte of the array's bytes [begin, end)
  // that is not loaded or queued yet. Not thread-safe.
  void Want(int64_t begin, int64_t end);
  // Reads the queued pages from the file (adjacent pages in one pread,
  // the reads spread over ctx.pool) and marks them loaded.
  Status Load(const ExecContext& ctx);
  // Gives back every loaded page (MADV_DONTNEED frees anonymous pages) and
  // forgets them.
  void Release();

  int64_t loaded_pages() const { return static_cast<int64_t>(loaded_.size()); }
  // Pages loaded since the last ResetPeak(): the most held at once.
  int64_t peak_pages() const { return peak_pages_; }
  void ResetPeak() { peak_pages_ = loaded_pages(); }
  int64_t page_size() const { return page_; }

 private:
  PageShadow() = default;
  // Runs of consecutive page numbers in `pages` (sorted in place).
  static std::vector<std::pair<int64_t, int64_t>> Runs(std::vector<int64_t>* pages);
  Status ReadRun(int64_t first, int64_t count) const;

  std::string what_;
  std::string path_;
  int fd_ = -1;
  int64_t file_size_ = 0;
  int64_t page_ = 4096;
  char* base_ = nullptr;         // the shadow: page k holds the file's page at file_base_ + k * page_
  int64_t map_bytes_ = 0;        // whole pages
  int64_t file_base_ = 0;        // the file offset of base_
  int64_t array_offset_ = 0;     // the array's first byte is base_ + array_offset_
  bool guard_ = false;
  Tensor tensor_;
  std::vector<uint64_t> bits_;   // a bit per page: loaded or queued
  std::vector<int64_t> queued_;  // pages to read by the next Load
  std::vector<int64_t> loaded_;  // pages read since the last Release
  int64_t peak_pages_ = 0;
};

}  // namespace foresight
