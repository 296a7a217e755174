// Reading .npy files: header validation, pread into host memory, mmap views.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "file_util.h"
#include "foresight/storage/npy.h"
#include "npy_format.h"

namespace foresight::storage {
namespace {

using internal::ScopedFd;

// Header bytes beyond this are refused: numpy itself writes < 64 KiB, and a
// corrupt length field must not make us allocate gigabytes.
constexpr uint64_t kMaxHeaderBytes = 1 << 20;

StatusOr<NpyInfo> ReadHeaderFromFd(int fd, const std::string& path) {
  FS_ASSIGN_OR_RETURN(uint64_t file_size, internal::FileSizeOf(fd, path));
  unsigned char pre[12];
  if (file_size < 10) {
    return DataLoss(path + ": not a .npy file (truncated: " + std::to_string(file_size) +
                    " bytes, shorter than the 10-byte preamble)");
  }
  FS_RETURN_IF_ERROR(internal::PreadFull(fd, pre, 10, 0, path));
  if (std::memcmp(pre, "\x93NUMPY", 6) != 0) {
    return DataLoss(path + ": not a .npy file (bad magic; expected \\x93NUMPY)");
  }
  const int major = pre[6], minor = pre[7];
  uint64_t header_len, prefix;
  if (major == 1 && minor == 0) {
    header_len = pre[8] | (uint64_t(pre[9]) << 8);
    prefix = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (file_size < 12) return DataLoss(path + ": truncated .npy preamble");
    FS_RETURN_IF_ERROR(internal::PreadFull(fd, pre + 10, 2, 10, path));
    header_len = pre[8] | (uint64_t(pre[9]) << 8) | (uint64_t(pre[10]) << 16) |
                 (uint64_t(pre[11]) << 24);
    prefix = 12;
  } else {
    return Unimplemented(path + ": .npy format version " + std::to_string(major) + "." +
                         std::to_string(minor) + " is not supported (expected 1.0, 2.0 or 3.0)");
  }
  if (header_len > kMaxHeaderBytes) {
    return DataLoss(path + ": .npy header length " + std::to_string(header_len) +
                    " is implausible (corrupt file?)");
  }
  if (prefix + header_len > file_size) {
    return DataLoss(path + ": truncated: the .npy header needs " +
                    std::to_string(prefix + header_len) + " bytes, file has " +
                    std::to_string(file_size));
  }
  std::string text(header_len, '\0');
  FS_RETURN_IF_ERROR(internal::PreadFull(fd, text.data(), header_len, prefix, path));
  NpyInfo info;
  FS_RETURN_IF_ERROR(internal::ParseNpyHeaderDict(text, path, &info));
  info.data_offset = prefix + header_len;
  size_t data_bytes;
  if (!internal::CheckedDataBytes(info.shape, info.item_size, &data_bytes)) {
    return DataLoss(path + ": .npy shape " + ShapeToString(info.shape) + " overflows");
  }
  const uint64_t expected = info.data_offset + data_bytes;
  if (file_size < expected) {
    return DataLoss(path + ": truncated: expected " + std::to_string(expected) + " bytes (" +
                    std::to_string(info.data_offset) + " header + " + std::to_string(data_bytes) +
                    " data for shape " + ShapeToString(info.shape) + "), file has " +
                    std::to_string(file_size));
  }
  if (file_size > expected) {
    return DataLoss(path + ": expected " + std::to_string(expected) + " bytes for shape " +
                    ShapeToString(info.shape) + ", file has " + std::to_string(file_size) +
                    " (trailing bytes: corrupt or still being written)");
  }
  return info;
}

// The tensor shape of an array: string arrays gain a trailing width dim.
Shape TensorShape(const NpyInfo& info) {
  Shape s = info.shape;
  if (info.is_bytes) s.push_back(static_cast<int64_t>(info.item_size));
  return s;
}

}  // namespace

StatusOr<NpyInfo> ReadNpyHeader(const std::string& path) {
  FS_ASSIGN_OR_RETURN(ScopedFd fd, internal::OpenFile(path, O_RDONLY));
  return ReadHeaderFromFd(fd.get(), path);
}

StatusOr<Tensor> LoadNpy(const std::string& path) {
  FS_ASSIGN_OR_RETURN(ScopedFd fd, internal::OpenFile(path, O_RDONLY));
  FS_ASSIGN_OR_RETURN(NpyInfo info, ReadHeaderFromFd(fd.get(), path));
  Tensor t = Tensor::Empty(TensorShape(info), info.dtype);
  // Large reads in bounded pieces (Linux caps one read at ~2 GiB anyway).
  constexpr size_t kPiece = size_t(1) << 30;
  char* dst = static_cast<char*>(t.raw_data());
  const size_t total = info.data_bytes();
  for (size_t done = 0; done < total;) {
    const size_t n = std::min(kPiece, total - done);
    FS_RETURN_IF_ERROR(internal::PreadFull(fd.get(), dst + done, n, info.data_offset + done, path));
    done += n;
  }
  return t;
}

namespace {

// Maps `len` bytes of `fd` read-only. Mappings of at least one huge page
// start at a 2 MiB-aligned address (file offset 0 there, so every 2 MiB of
// the file lines up with a PMD) and get MADV_HUGEPAGE: on kernels whose
// page cache holds large folios for the filesystem, reads then fault in
// 2 MiB pages, and random CSR and feature-row reads miss the TLB far less.
// Elsewhere the advice changes nothing.
StatusOr<void*> MapReadOnly(int fd, size_t len, const std::string& path) {
  constexpr size_t kHugePage = size_t{2} << 20;
  if (len < kHugePage) {
    void* base = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) return ErrnoError("mmap " + path, errno);
    return base;
  }
  // Reserve address space with room to align, map the file over the aligned
  // part, and give back the slack on both sides.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t len_pages = (len + page - 1) / page * page;
  const size_t reserve = len_pages + kHugePage;
  void* r = ::mmap(nullptr, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) return ErrnoError("mmap (address reservation) for " + path, errno);
  const uintptr_t start = reinterpret_cast<uintptr_t>(r);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  void* base = ::mmap(reinterpret_cast<void*>(aligned), len, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    ::munmap(r, reserve);
    return ErrnoError("mmap " + path, err);
  }
  if (aligned > start) ::munmap(r, aligned - start);
  const uintptr_t end = aligned + len_pages;
  if (start + reserve > end) ::munmap(reinterpret_cast<void*>(end), start + reserve - end);
  (void)::madvise(base, len, MADV_HUGEPAGE);  // advice only
  return base;
}

}  // namespace

StatusOr<Tensor> MmapNpy(const std::string& path, NpyInfo* info_out) {
  FS_ASSIGN_OR_RETURN(ScopedFd fd, internal::OpenFile(path, O_RDONLY));
  FS_ASSIGN_OR_RETURN(NpyInfo info, ReadHeaderFromFd(fd.get(), path));
  if (info_out != nullptr) *info_out = info;
  const size_t map_len = info.data_offset + info.data_bytes();
  // The whole file is mapped from offset 0 (mmap offsets must be page
  // aligned; numpy-written files put data at 64-byte boundaries).
  FS_ASSIGN_OR_RETURN(void* base, MapReadOnly(fd.get(), map_len, path));
  // The mapping outlives the fd; the owner unmaps when the last view goes.
  std::shared_ptr<void> owner(base, [map_len](void* p) { ::munmap(p, map_len); });
  char* data = static_cast<char*>(base) + info.data_offset;
  return Tensor::FromBlob(data, TensorShape(info), info.dtype, Device::Cpu(), std::move(owner));
}

StatusOr<Tensor> MmapNpy(const std::string& path) { return MmapNpy(path, nullptr); }

}  // namespace foresight::storage
