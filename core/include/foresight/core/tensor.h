// Tensor: a typed, strided view over bytes on one device. Owning tensors hold
// their Storage; views (slices, mmap'd files, cache slots) share or borrow it.
// Copies of a Tensor are shallow (they share bytes), like std::shared_ptr.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/allocator.h"
#include "foresight/core/device.h"
#include "foresight/core/dtype.h"
#include "foresight/core/status.h"

namespace foresight {

using Shape = std::vector<int64_t>;

std::string ShapeToString(const Shape& shape);  // "[2, 3]"
int64_t ShapeNumel(const Shape& shape);

// A block of bytes and whatever keeps it alive. Thread-safe to share.
class Storage {
 public:
  // Allocates `bytes` from `allocator` (freed when the last holder goes).
  static StatusOr<std::shared_ptr<Storage>> Allocate(Allocator* allocator, size_t bytes);
  // Borrows `data`; `owner` (may be null) is kept alive as long as the view.
  static std::shared_ptr<Storage> Wrap(void* data, size_t bytes, Device device,
                                       MemoryKind kind, std::shared_ptr<void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  MemoryKind kind() const { return kind_; }

 private:
  Storage() = default;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  Device device_;
  MemoryKind kind_ = MemoryKind::kHost;
  Allocator* allocator_ = nullptr;  // null for wrapped memory
  std::shared_ptr<void> owner_;
};

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() is false

  // Contiguous host tensor; aborts only if the host is out of memory (as
  // std::vector would). Contents are uninitialised.
  static Tensor Empty(const Shape& shape, DType dtype);
  static Tensor Zeros(const Shape& shape, DType dtype);
  // Contiguous tensor on any device / memory kind.
  static StatusOr<Tensor> EmptyOn(Device device, const Shape& shape, DType dtype);
  static StatusOr<Tensor> EmptyPinned(const Shape& shape, DType dtype);
  // A non-owning view of `data` (host or device pointer). `owner` keeps the
  // memory alive (e.g. an mmap); pass null when the caller guarantees it.
  static Tensor FromBlob(void* data, const Shape& shape, DType dtype,
                         Device device = Device::Cpu(),
                         std::shared_ptr<void> owner = nullptr,
                         MemoryKind kind = MemoryKind::kHost);
  // A strided view into `storage` (offset and strides in elements).
  static Tensor View(std::shared_ptr<Storage> storage, int64_t offset,
                     const Shape& shape, const Shape& strides, DType dtype);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::Cpu(); }
  MemoryKind memory_kind() const { return storage_ ? storage_->kind() : MemoryKind::kHost; }
  int dim() const { return static_cast<int>(shape_.size()); }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t size(int d) const { return shape_[d < 0 ? d + dim() : d]; }
  int64_t stride(int d) const { return strides_[d < 0 ? d + dim() : d]; }
  int64_t numel() const { return ShapeNumel(shape_); }
  size_t element_size() const { return DTypeSize(dtype_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  int64_t offset() const { return offset_; }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  void* raw_data() const;
  // Typed pointer to element [0,...,0]. Checked against dtype in debug builds.
  template <typename T> T* data() const {
    assertDType(DTypeOf<T>::value);
    return static_cast<T*>(raw_data());
  }

  // Views (share bytes).
  Tensor Slice(int dim, int64_t start, int64_t end) const;  // [start, end)
  Tensor Select(int dim, int64_t index) const;              // drops `dim`
  Tensor Transpose(int a, int b) const;
  StatusOr<Tensor> Reshape(const Shape& shape) const;  // contiguous only

  // Copies (new bytes). CopyFrom needs equal shapes and dtypes; devices may
  // differ when the build supports the pair.
  Status CopyFrom(const Tensor& src);
  StatusOr<Tensor> To(Device device) const;
  Tensor Clone() const;  // host tensors only; contiguous result
  StatusOr<Tensor> Contiguous() const;

  // Fill with a value (f32 for float dtypes, integers exactly).
  Status Fill(double value);
  Status ZeroFill();

  std::string ToString() const;  // "Tensor(f32, [2, 3], cpu)"

 private:
  void assertDType(DType expected) const;
  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;
  Shape shape_;
  Shape strides_;
  DType dtype_ = DType::kF32;
};

// Row-major contiguous strides for `shape`.
Shape ContiguousStrides(const Shape& shape);

// Checks used at op boundaries; messages name `what`.
Status CheckDefined(const Tensor& t, const char* what);
Status CheckDType(const Tensor& t, DType dtype, const char* what);
Status CheckShape(const Tensor& t, const Shape& shape, const char* what);
Status CheckDim(const Tensor& t, int dim, const char* what);
Status CheckContiguous(const Tensor& t, const char* what);
Status CheckSameDevice(const Tensor& a, const Tensor& b, const char* what);

}  // namespace foresight
