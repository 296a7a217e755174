#include "partition_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace foresight::graph::internal {
namespace {

std::atomic<int64_t> g_write_limit{-1};

// Bytes the test hook still lets through for a write of `n` (n when off).
size_t AllowedBytes(size_t n) {
  int64_t left = g_write_limit.load(std::memory_order_relaxed);
  while (left >= 0) {
    const int64_t take = std::min<int64_t>(left, static_cast<int64_t>(n));
    if (g_write_limit.compare_exchange_weak(left, left - take, std::memory_order_relaxed)) {
      return static_cast<size_t>(take);
    }
  }
  return n;
}

// storage::PwriteFull behind the test hook: the bytes the hook lets
// through are written, then the write fails as on a full disk.
Status PwriteAll(int fd, const void* data, size_t n, uint64_t offset, const std::string& path) {
  const size_t allowed = AllowedBytes(n);
  FS_RETURN_IF_ERROR(storage::PwriteFull(fd, data, allowed, offset, path));
  if (allowed < n) return ErrnoError("write " + path + " at offset " + std::to_string(offset + allowed), ENOSPC);
  return Status::OK();
}

StatusOr<std::string> DescrOf(const storage::NpyInfo& like) {
  if (like.is_bytes) return "|S" + std::to_string(like.item_size);
  return storage::NpyDescr(like.dtype);
}

}  // namespace

StatusOr<SourceArray> SourceArray::Open(const std::string& path) {
  SourceArray a;
  a.path_ = path;
  FS_ASSIGN_OR_RETURN(a.info_, storage::ReadNpyHeader(path));
  if (a.info_.shape.empty()) return DataLoss(path + ": expected an array with at least one dimension, got a scalar");
  a.row_bytes_ = a.info_.item_size;
  for (size_t d = 1; d < a.info_.shape.size(); ++d) a.row_bytes_ *= static_cast<size_t>(a.info_.shape[d]);
  FS_ASSIGN_OR_RETURN(storage::ScopedFd fd, storage::OpenFile(path, O_RDONLY));
  a.fd_ = std::make_shared<storage::ScopedFd>(std::move(fd));
  return a;
}

Status SourceArray::ReadRows(int64_t first, int64_t count, void* out) const {
  if (first < 0 || count < 0 || first + count > rows()) {
    return Internal(path_ + ": read of rows [" + std::to_string(first) + ", " +
                    std::to_string(first + count) + ") outside the array's " + std::to_string(rows()));
  }
  const size_t n = static_cast<size_t>(count) * row_bytes_;
  const uint64_t offset = info_.data_offset + static_cast<uint64_t>(first) * row_bytes_;
  return storage::PreadFull(fd_->get(), out, n, offset, path_);
}

StatusOr<std::unique_ptr<OutputArray>> OutputArray::Create(const std::string& path,
                                                           const storage::NpyInfo& like,
                                                           const Shape& shape) {
  FS_ASSIGN_OR_RETURN(std::string descr, DescrOf(like));
  const uint64_t data_bytes = static_cast<uint64_t>(ShapeNumel(shape)) * like.item_size;
  if (data_bytes == 0) {
    // NpyWriter writes an empty array the way numpy can map it.
    Shape inner(shape.begin() + (shape.empty() ? 0 : 1), shape.end());
    std::unique_ptr<storage::NpyWriter> w;
    if (like.is_bytes) {
      FS_ASSIGN_OR_RETURN(w, storage::NpyWriter::CreateBytes(path, static_cast<int>(like.item_size)));
    } else {
      FS_ASSIGN_OR_RETURN(w, storage::NpyWriter::Create(path, like.dtype, inner));
      // Rows of zero width (a dataset without features: [N, 0]) keep their
      // count, which the manifest's node count is checked against.
      const char none = 0;
      if (!shape.empty() && shape[0] > 0) FS_RETURN_IF_ERROR(w->Append(&none, shape[0]));
    }
    FS_RETURN_IF_ERROR(w->Finish());
    return std::unique_ptr<OutputArray>(new OutputArray(path, storage::ScopedFd(), 0, 0));
  }
  FS_ASSIGN_OR_RETURN(std::string header, storage::BuildNpyHeader(descr, shape));
  FS_ASSIGN_OR_RETURN(storage::ScopedFd h, storage::OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  FS_RETURN_IF_ERROR(PwriteAll(h.get(), header.data(), header.size(), 0, path));
  return std::unique_ptr<OutputArray>(new OutputArray(path, std::move(h), header.size(), data_bytes));
}

Status OutputArray::WriteAt(uint64_t offset, const void* data, size_t bytes) {
  if (offset + bytes > data_bytes_) {
    return Internal(path_ + ": write of " + std::to_string(bytes) + " bytes at data offset " +
                    std::to_string(offset) + " beyond the array's " + std::to_string(data_bytes_));
  }
  if (bytes == 0) return Status::OK();
  FS_RETURN_IF_ERROR(PwriteAll(fd_.get(), data, bytes, data_offset_ + offset, path_));
  written_ += bytes;
  return Status::OK();
}

Status OutputArray::Finish() {
  if (written_ != data_bytes_) {
    return Internal(path_ + ": " + std::to_string(written_) + " of " + std::to_string(data_bytes_) +
                    " data bytes written");
  }
  return storage::CloseFd(&fd_, path_);
}

RegionWriter::RegionWriter(OutputArray* out, std::vector<uint64_t> begin, size_t buffer_bytes)
    : out_(out), begin_(std::move(begin)), buffer_bytes_(std::max<size_t>(buffer_bytes, 1)) {
  const size_t parts = begin_.size() - 1;
  cursor_.assign(begin_.begin(), begin_.end() - 1);
  buf_.resize(parts);
  used_.assign(parts, 0);
}

Status RegionWriter::FlushRegion(int r) {
  if (used_[r] == 0) return Status::OK();
  if (cursor_[r] + used_[r] > begin_[r + 1]) {
    return Internal(out_->path() + ": region " + std::to_string(r) + " overflows its " +
                    std::to_string(begin_[r + 1] - begin_[r]) + " bytes");
  }
  FS_RETURN_IF_ERROR(out_->WriteAt(cursor_[r], buf_[r].data(), used_[r]));
  cursor_[r] += used_[r];
  used_[r] = 0;
  return Status::OK();
}

Status RegionWriter::Append(int r, const void* data, size_t bytes) {
  std::vector<char>& b = buf_[r];
  if (used_[r] + bytes > buffer_bytes_) {
    FS_RETURN_IF_ERROR(FlushRegion(r));
    if (bytes >= buffer_bytes_) {  // a large row goes straight to the file
      if (cursor_[r] + bytes > begin_[r + 1]) {
        return Internal(out_->path() + ": region " + std::to_string(r) + " overflows");
      }
      FS_RETURN_IF_ERROR(out_->WriteAt(cursor_[r], data, bytes));
      cursor_[r] += bytes;
      return Status::OK();
    }
  }
  if (b.size() < buffer_bytes_) b.resize(buffer_bytes_);  // first use: no memory for idle regions
  std::memcpy(b.data() + used_[r], data, bytes);
  used_[r] += bytes;
  return Status::OK();
}

Status RegionWriter::Finish() {
  for (size_t r = 0; r < buf_.size(); ++r) {
    FS_RETURN_IF_ERROR(FlushRegion(static_cast<int>(r)));
    if (cursor_[r] != begin_[r + 1]) {
      return Internal(out_->path() + ": region " + std::to_string(r) + " got " +
                      std::to_string(cursor_[r] - begin_[r]) + " of its " +
                      std::to_string(begin_[r + 1] - begin_[r]) + " bytes");
    }
    std::vector<char>().swap(buf_[r]);
  }
  return Status::OK();
}

ScatterWriter::ScatterWriter(OutputArray* out, size_t buffer_bytes)
    : out_(out), buffer_bytes_(std::max<size_t>(buffer_bytes, 1)) {}

Status ScatterWriter::Put(uint64_t offset, const void* data, size_t bytes) {
  if (buf_.size() + bytes > buffer_bytes_) FS_RETURN_IF_ERROR(Flush());
  if (bytes >= buffer_bytes_) return out_->WriteAt(offset, data, bytes);
  if (buf_.capacity() < buffer_bytes_) buf_.reserve(buffer_bytes_);
  runs_.push_back({offset, buf_.size(), bytes});
  buf_.insert(buf_.end(), static_cast<const char*>(data), static_cast<const char*>(data) + bytes);
  return Status::OK();
}

Status ScatterWriter::Flush() {
  std::sort(runs_.begin(), runs_.end(), [](const Run& a, const Run& b) { return a.offset < b.offset; });
  size_t i = 0;
  while (i < runs_.size()) {
    size_t j = i + 1;
    uint64_t end = runs_[i].offset + runs_[i].bytes;
    while (j < runs_.size() && runs_[j].offset == end) end += runs_[j++].bytes;
    if (j == i + 1) {
      FS_RETURN_IF_ERROR(out_->WriteAt(runs_[i].offset, buf_.data() + runs_[i].at, runs_[i].bytes));
    } else {
      merged_.resize(static_cast<size_t>(end - runs_[i].offset));
      for (size_t k = i; k < j; ++k) {
        std::memcpy(merged_.data() + (runs_[k].offset - runs_[i].offset), buf_.data() + runs_[k].at, runs_[k].bytes);
      }
      FS_RETURN_IF_ERROR(out_->WriteAt(runs_[i].offset, merged_.data(), merged_.size()));
    }
    i = j;
  }
  runs_.clear();
  buf_.clear();
  return Status::OK();
}

Status ScatterWriter::Finish() {
  FS_RETURN_IF_ERROR(Flush());
  std::vector<char>().swap(buf_);
  std::vector<char>().swap(merged_);
  return Status::OK();
}

void SetWriteLimitForTesting(int64_t bytes) { g_write_limit.store(bytes, std::memory_order_relaxed); }

}  // namespace foresight::graph::internal
