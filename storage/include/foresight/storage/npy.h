// NumPy .npy files: the array format of foresight datasets, read by mmap or
// pread and written by streaming. Every non-empty .npy foresight writes pads
// its header so the data starts at a 4096-byte boundary (O_DIRECT reads of
// rows); numpy opens these files unchanged (np.load(path, mmap_mode='r')).
// Empty arrays get a 64-byte-aligned header instead: numpy cannot mmap a file
// whose empty data section starts at a page-aligned end of file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight::storage {

// Alignment of the data section in (non-empty) files foresight writes.
inline constexpr size_t kNpyDataAlignment = 4096;

// What a .npy header says about its array.
struct NpyInfo {
  // Element type. Bool ('|b1') maps to kU8. For '|S<n>' fixed-width byte
  // strings dtype is kU8 and the string width is item_size.
  DType dtype = DType::kU8;
  Shape shape;             // numpy shape; {} for a 0-d array
  size_t data_offset = 0;  // bytes from the start of the file to the data
  size_t item_size = 0;    // bytes per element (the string width for '|S<n>')
  bool is_bytes = false;   // numpy '|S<n>' fixed-width strings
  size_t data_bytes() const { return static_cast<size_t>(ShapeNumel(shape)) * item_size; }
};

// Parses and validates the header of `path`: magic, version 1.0/2.0/3.0,
// little-endian '<f4','<f2','<i4','<i8','|u1','|b1' (as u8) or '|S<n>',
// fortran_order False, and file size == data_offset + numel * item_size
// (DataLoss "truncated" otherwise, naming the path and both sizes).
StatusOr<NpyInfo> ReadNpyHeader(const std::string& path);

// Reads the whole array into host memory (pread). '|S<n>' arrays load as u8
// tensors of shape shape + {n}.
StatusOr<Tensor> LoadNpy(const std::string& path);

// A read-only MAP_SHARED view of the array (same shape convention as
// LoadNpy). The returned Tensor (and its copies/views) keep the mapping alive;
// writing through it is undefined (the pages are PROT_READ).
StatusOr<Tensor> MmapNpy(const std::string& path);
// Same, also returning the header.
StatusOr<Tensor> MmapNpy(const std::string& path, NpyInfo* info);

// Writes a host tensor (made contiguous if needed) as `path`, via a
// temporary file + fsync + rename, so `path` is either absent/old or complete.
Status SaveNpy(const std::string& path, const Tensor& t);
// Same for fixed-width byte strings: `t` is u8 [..., width], written as
// '|S<width>' with shape t.shape() minus its last dim.
Status SaveNpyBytes(const std::string& path, const Tensor& t);

// Streams rows of an array to `path` with a buffered writer. The header is
// written padded (data at a 4096-byte boundary; see above for empty arrays)
// and rewritten by Finish with
// the final row count. A writer destroyed without a successful Finish removes
// its partial file. Not thread-safe.
class NpyWriter {
 public:
  // Rows of `inner_shape` (trailing dims: {F} for an [N, F] array, {} for
  // 1-D) of `dtype`.
  static StatusOr<std::unique_ptr<NpyWriter>> Create(const std::string& path, DType dtype,
                                                     Shape inner_shape);
  // A 1-D array of '|S<width>' fixed-width byte strings; each row is `width`
  // bytes (zero-padded by the caller).
  static StatusOr<std::unique_ptr<NpyWriter>> CreateBytes(const std::string& path, int width);
  ~NpyWriter();
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;

  // Appends `num_rows` rows from host memory `rows` (num_rows * row_bytes()
  // bytes). A write error (ENOSPC, ...) returns a Status naming the file; the
  // writer is then failed and every later call returns that error.
  Status Append(const void* rows, int64_t num_rows);
  // Appends a tensor whose shape is [n] + inner_shape and whose dtype matches.
  Status AppendTensor(const Tensor& rows);
  int64_t rows() const { return rows_; }
  size_t row_bytes() const { return row_bytes_; }
  const std::string& path() const { return path_; }
  // Flushes, rewrites the header with the final row count, fsyncs and closes.
  Status Finish();

 private:
  NpyWriter(std::string path, int fd, DType dtype, Shape inner_shape, bool is_bytes,
            size_t item_size);
  Status Flush();
  Status Fail(Status s);

  std::string path_;
  int fd_ = -1;
  DType dtype_;
  Shape inner_shape_;
  bool is_bytes_;
  size_t item_size_;
  size_t row_bytes_;
  int64_t rows_ = 0;
  uint64_t file_offset_ = 0;  // where the buffer's first byte goes
  std::vector<char> buffer_;
  size_t buffered_ = 0;
  Status error_;
  bool finished_ = false;
};

// Builds the padded header bytes ("\x93NUMPY" v1.0, dict, spaces, '\n') whose
// length is a multiple of kNpyDataAlignment. `descr` is e.g. "<f4" or "|S12".
StatusOr<std::string> BuildNpyHeader(const std::string& descr, const Shape& shape);
// The numpy descr of a dtype ("<f4", "<f2", "<i4", "<i8", "|u1"); bf16 has
// none (Unimplemented).
StatusOr<std::string> NpyDescr(DType dtype);

}  // namespace foresight::storage
