// Writing .npy files: streamed rows with a buffered writer, header padded so
// data starts at a 4096-byte boundary and rewritten with the final row count.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "file_util.h"
#include "foresight/storage/npy.h"
#include "npy_format.h"

namespace foresight::storage {
namespace {

constexpr size_t kWriteBuffer = size_t(4) << 20;
constexpr size_t kMinWriteBuffer = size_t(4) << 10;  // the first allocation

size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

// The header size that fits any row count: built with the widest count.
StatusOr<size_t> ReservedHeaderSize(const std::string& descr, const Shape& inner) {
  Shape widest = {std::numeric_limits<int64_t>::max()};
  widest.insert(widest.end(), inner.begin(), inner.end());
  FS_ASSIGN_OR_RETURN(std::string h, BuildNpyHeader(descr, widest));
  return h.size();
}

std::string BytesDescr(size_t width) { return "|S" + std::to_string(width); }

}  // namespace

StatusOr<std::string> NpyDescr(DType dtype) {
  switch (dtype) {
    case DType::kF32: return std::string("<f4");
    case DType::kF16: return std::string("<f2");
    case DType::kI32: return std::string("<i4");
    case DType::kI64: return std::string("<i8");
    case DType::kU8: return std::string("|u1");
    case DType::kBF16: break;
  }
  return Unimplemented(std::string("dtype ") + DTypeName(dtype) +
                       " has no numpy equivalent; convert to f32 before saving as .npy");
}

namespace {

// The header padded to the next multiple of `align`.
StatusOr<std::string> BuildAlignedHeader(const std::string& descr, const Shape& shape, size_t align) {
  return internal::BuildNpyHeaderOfSize(descr, shape, RoundUp(internal::NpyHeaderTextSize(descr, shape), align));
}

}  // namespace

StatusOr<std::string> BuildNpyHeader(const std::string& descr, const Shape& shape) {
  return BuildAlignedHeader(descr, shape, kNpyDataAlignment);
}

NpyWriter::NpyWriter(std::string path, int fd, DType dtype, Shape inner_shape, bool is_bytes,
                     size_t item_size)
    : path_(std::move(path)),
      fd_(fd),
      dtype_(dtype),
      inner_shape_(std::move(inner_shape)),
      is_bytes_(is_bytes),
      item_size_(item_size),
      row_bytes_(static_cast<size_t>(ShapeNumel(inner_shape_)) * item_size) {}

NpyWriter::~NpyWriter() {
  if (fd_ >= 0) {
    struct stat st;
    // Only a regular file we created is removed (never /dev/... targets).
    const bool regular = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
    ::close(fd_);
    fd_ = -1;
    if (!finished_ && regular) ::unlink(path_.c_str());
  }
}

StatusOr<std::unique_ptr<NpyWriter>> NpyWriter::Create(const std::string& path, DType dtype,
                                                       Shape inner_shape) {
  for (int64_t d : inner_shape) {
    if (d < 0) return InvalidArgument(path + ": negative dimension in row shape " + ShapeToString(inner_shape));
  }
  FS_ASSIGN_OR_RETURN(std::string descr, NpyDescr(dtype));
  FS_ASSIGN_OR_RETURN(size_t header_size, ReservedHeaderSize(descr, inner_shape));
  FS_ASSIGN_OR_RETURN(internal::ScopedFd fd,
                      internal::OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  std::unique_ptr<NpyWriter> w(
      new NpyWriter(path, fd.release(), dtype, std::move(inner_shape), false, DTypeSize(dtype)));
  w->file_offset_ = header_size;  // the header is written by Finish
  return w;
}

StatusOr<std::unique_ptr<NpyWriter>> NpyWriter::CreateBytes(const std::string& path, int width) {
  if (width <= 0) return InvalidArgument(path + ": byte-string width must be positive, got " + std::to_string(width));
  FS_ASSIGN_OR_RETURN(size_t header_size, ReservedHeaderSize(BytesDescr(width), {}));
  FS_ASSIGN_OR_RETURN(internal::ScopedFd fd,
                      internal::OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  std::unique_ptr<NpyWriter> w(
      new NpyWriter(path, fd.release(), DType::kU8, {}, true, static_cast<size_t>(width)));
  w->file_offset_ = header_size;
  return w;
}

Status NpyWriter::Fail(Status s) {
  error_ = s;
  return s;
}

Status NpyWriter::Flush() {
  if (buffered_ == 0) return Status::OK();
  Status s = internal::PwriteFull(fd_, buffer_.data(), buffered_, file_offset_, path_);
  if (!s.ok()) return Fail(s);
  file_offset_ += buffered_;
  buffered_ = 0;
  return Status::OK();
}

Status NpyWriter::Append(const void* rows, int64_t num_rows) {
  if (!error_.ok()) return error_;
  if (finished_ || fd_ < 0) return FailedPrecondition(path_ + ": Append after Finish");
  if (num_rows < 0) return InvalidArgument(path_ + ": Append of a negative row count");
  const char* src = static_cast<const char*>(rows);
  size_t left = static_cast<size_t>(num_rows) * row_bytes_;
  while (left > 0) {
    if (buffered_ == 0 && left >= kWriteBuffer) {
      // Large appends go straight to the file, skipping the copy.
      Status s = internal::PwriteFull(fd_, src, left, file_offset_, path_);
      if (!s.ok()) return Fail(s);
      file_offset_ += left;
      break;
    }
    if (buffered_ + left > buffer_.size() && buffer_.size() < kWriteBuffer) {
      // The buffer grows with the data up to kWriteBuffer: most of a
      // dataset's arrays are small, and zeroing 4 MiB for each of them was
      // most of the time of a small preprocess.
      buffer_.resize(std::min(kWriteBuffer, std::max({2 * buffer_.size(), buffered_ + left, kMinWriteBuffer})));
    }
    const size_t n = std::min(left, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, src, n);
    buffered_ += n;
    src += n;
    left -= n;
    if (buffered_ == kWriteBuffer) FS_RETURN_IF_ERROR(Flush());
  }
  rows_ += num_rows;
  return Status::OK();
}

Status NpyWriter::AppendTensor(const Tensor& t) {
  FS_RETURN_IF_ERROR(CheckDefined(t, "rows"));
  if (t.device() != Device::Cpu()) return InvalidArgument(path_ + ": AppendTensor needs a host tensor, got " + t.ToString());
  Shape expected_inner = inner_shape_;
  if (is_bytes_) expected_inner.push_back(static_cast<int64_t>(item_size_));
  if (t.dtype() != dtype_ || t.dim() != static_cast<int>(expected_inner.size()) + 1 ||
      !std::equal(expected_inner.begin(), expected_inner.end(), t.shape().begin() + 1)) {
    return InvalidArgument(path_ + ": AppendTensor expects " + DTypeName(dtype_) + " [n, " +
                           ShapeToString(expected_inner) + " row], got " + t.ToString());
  }
  if (t.is_contiguous()) return Append(t.raw_data(), t.size(0));
  FS_ASSIGN_OR_RETURN(Tensor c, t.Contiguous());
  return Append(c.raw_data(), c.size(0));
}

Status NpyWriter::Finish() {
  if (!error_.ok()) return error_;
  if (finished_) return Status::OK();
  FS_RETURN_IF_ERROR(Flush());
  Shape shape = {rows_};
  shape.insert(shape.end(), inner_shape_.begin(), inner_shape_.end());
  std::string descr;
  if (is_bytes_) {
    descr = BytesDescr(item_size_);
  } else {
    FS_ASSIGN_OR_RETURN(descr, NpyDescr(dtype_));
  }
  FS_ASSIGN_OR_RETURN(size_t header_size, ReservedHeaderSize(descr, inner_shape_));
  std::string header;
  const bool empty = rows_ == 0 || row_bytes_ == 0;
  if (empty) {
    // numpy cannot mmap a file whose (empty) data starts at a page-aligned
    // end of file, so an empty array gets numpy's usual 64-byte header.
    FS_ASSIGN_OR_RETURN(header, BuildAlignedHeader(descr, shape, 64));
  } else {
    FS_ASSIGN_OR_RETURN(header, internal::BuildNpyHeaderOfSize(descr, shape, header_size));
  }
  Status s = internal::PwriteFull(fd_, header.data(), header.size(), 0, path_);
  if (s.ok() && empty && ::ftruncate(fd_, static_cast<off_t>(header.size())) != 0) {
    s = ErrnoError("ftruncate " + path_, errno);
  }
  if (s.ok()) s = internal::FsyncFd(fd_, path_);
  if (s.ok()) {
    internal::ScopedFd fd(fd_);
    fd_ = -1;
    s = internal::CloseFd(&fd, path_);
    if (!s.ok()) ::unlink(path_.c_str());
  }
  if (!s.ok()) return Fail(s);
  finished_ = true;
  return Status::OK();
}

namespace {

Status SaveVia(const std::string& path, const Tensor& t, bool bytes) {
  FS_RETURN_IF_ERROR(CheckDefined(t, "tensor"));
  if (t.device() != Device::Cpu()) {
    return InvalidArgument("SaveNpy " + path + ": needs a host tensor, got " + t.ToString());
  }
  Tensor c = t;
  if (!t.is_contiguous()) {
    FS_ASSIGN_OR_RETURN(c, t.Contiguous());
  }
  // Write beside the target, then rename: readers see the old file or the
  // complete new one, never a partial one.
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + internal::RandomSuffix();
  std::unique_ptr<NpyWriter> w;
  int64_t rows;
  if (bytes) {
    if (c.dtype() != DType::kU8 || c.dim() < 1 || c.size(-1) <= 0 || c.size(-1) > (1 << 30)) {
      return InvalidArgument("SaveNpyBytes " + path + ": needs a u8 [..., width] tensor, got " + c.ToString());
    }
    if (c.dim() != 2) {
      return InvalidArgument("SaveNpyBytes " + path + ": only 1-D string arrays (u8 [N, width]) are supported, got " +
                             c.ToString());
    }
    FS_ASSIGN_OR_RETURN(w, NpyWriter::CreateBytes(tmp, static_cast<int>(c.size(-1))));
    rows = c.size(0);
  } else {
    // A 0-d tensor has no rows dimension; write it as shape (1,)?  numpy's 0-d
    // arrays are rare in datasets, so refuse them clearly instead.
    if (c.dim() == 0) return InvalidArgument("SaveNpy " + path + ": 0-d tensors are not supported");
    Shape inner(c.shape().begin() + 1, c.shape().end());
    FS_ASSIGN_OR_RETURN(w, NpyWriter::Create(tmp, c.dtype(), inner));
    rows = c.size(0);
  }
  FS_RETURN_IF_ERROR(w->Append(c.raw_data(), rows));
  FS_RETURN_IF_ERROR(w->Finish());
  Status s = internal::RenamePath(tmp, path);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return internal::FsyncDir(internal::ParentDir(path));
}

}  // namespace

Status SaveNpy(const std::string& path, const Tensor& t) { return SaveVia(path, t, false); }
Status SaveNpyBytes(const std::string& path, const Tensor& t) { return SaveVia(path, t, true); }

}  // namespace foresight::storage
