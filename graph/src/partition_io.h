// File I/O of the partitioner: the source dataset's arrays read with pread
// in bounded chunks (nothing mmap'd, so reading never adds to RSS), and the
// renumbered arrays written with pwrite into .npy files whose rows are
// scattered to P contiguous regions (partition p's rows are appended to
// region p in order, so every region is written sequentially). Private to
// the graph module.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/process_memory.h"
#include "foresight/core/status.h"
#include "foresight/storage/file_io.h"
#include "foresight/storage/npy.h"

namespace foresight::graph::internal {

// One .npy array of the source dataset, read by rows with pread.
// Thread-safe (pread only).
class SourceArray {
 public:
  // Reads and validates the header (storage::ReadNpyHeader: size matches).
  static StatusOr<SourceArray> Open(const std::string& path);
  SourceArray() = default;
  SourceArray(SourceArray&&) = default;
  SourceArray& operator=(SourceArray&&) = default;

  // Reads rows [first, first + count) into `out` (count * row_bytes()).
  Status ReadRows(int64_t first, int64_t count, void* out) const;
  int64_t rows() const { return info_.shape.empty() ? 1 : info_.shape[0]; }
  // Bytes per row (element size times the trailing dims).
  size_t row_bytes() const { return row_bytes_; }
  const storage::NpyInfo& info() const { return info_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  storage::NpyInfo info_;
  size_t row_bytes_ = 0;
  std::shared_ptr<storage::ScopedFd> fd_;
};

// A .npy file being written by position: the header (numpy descr and final
// shape) first, then data bytes at any offset. Not thread-safe.
class OutputArray {
 public:
  // Element type from `like` (dtype, or '|S<item_size>' when is_bytes).
  // An empty array is written completely here (numpy's 64-byte header).
  static StatusOr<std::unique_ptr<OutputArray>> Create(const std::string& path,
                                                       const storage::NpyInfo& like,
                                                       const Shape& shape);
  // Writes `bytes` at `offset` from the start of the data section.
  // ENOSPC/EDQUOT become ResourceExhausted naming the file.
  Status WriteAt(uint64_t offset, const void* data, size_t bytes);
  // Checks that the data section is complete and closes the file (the
  // dataset commit fsyncs it).
  Status Finish();
  const std::string& path() const { return path_; }
  uint64_t data_bytes() const { return data_bytes_; }

 private:
  OutputArray(std::string path, storage::ScopedFd fd, uint64_t data_offset, uint64_t data_bytes)
      : path_(std::move(path)), fd_(std::move(fd)), data_offset_(data_offset), data_bytes_(data_bytes) {}
  std::string path_;
  storage::ScopedFd fd_;
  uint64_t data_offset_;
  uint64_t data_bytes_;
  uint64_t written_ = 0;
};

// Appends bytes to P regions of an OutputArray: region p covers data bytes
// [begin[p], begin[p+1]). Each region has its own buffer of
// `buffer_bytes` (flushed by one pwrite when full). Not thread-safe.
class RegionWriter {
 public:
  RegionWriter(OutputArray* out, std::vector<uint64_t> begin, size_t buffer_bytes);
  Status Append(int region, const void* data, size_t bytes);
  // Flushes every buffer and checks that every region was filled exactly.
  Status Finish();

 private:
  Status FlushRegion(int region);
  OutputArray* out_;
  std::vector<uint64_t> begin_;   // P + 1
  std::vector<uint64_t> cursor_;  // next file position of region p's buffer
  std::vector<std::vector<char>> buf_;
  std::vector<size_t> used_;
  size_t buffer_bytes_;
};

// Writes byte runs of an OutputArray at any data offsets: runs are buffered
// (up to `buffer_bytes`) and written sorted by offset, neighbouring runs as
// one pwrite, so rows placed in a new order inside their partitions (a node
// order) cost about one write per contiguous run. Not thread-safe.
class ScatterWriter {
 public:
  ScatterWriter(OutputArray* out, size_t buffer_bytes);
  Status Put(uint64_t offset, const void* data, size_t bytes);
  // Writes what is buffered (OutputArray::Finish then checks completeness).
  Status Finish();

 private:
  struct Run {
    uint64_t offset;
    size_t at;  // in buf_
    size_t bytes;
  };
  Status Flush();
  OutputArray* out_;
  size_t buffer_bytes_;
  std::vector<char> buf_, merged_;
  std::vector<Run> runs_;
};

// Test hook: after `bytes` more bytes are written through OutputArray, every
// write fails with ENOSPC, as on a full disk. Negative (the default) = off.
void SetWriteLimitForTesting(int64_t bytes);


}  // namespace foresight::graph::internal
