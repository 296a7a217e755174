#include "foresight/core/tensor.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <new>

#include "cuda_runtime_api.h"

namespace foresight {

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t ShapeNumel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Shape ContiguousStrides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

// ---- Storage ----

StatusOr<std::shared_ptr<Storage>> Storage::Allocate(Allocator* allocator, size_t bytes) {
  FS_ASSIGN_OR_RETURN(void* p, allocator->Allocate(bytes));
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = p;
  s->bytes_ = bytes;
  s->device_ = allocator->device();
  s->kind_ = allocator->kind();
  s->allocator_ = allocator;
  return s;
}

std::shared_ptr<Storage> Storage::Wrap(void* data, size_t bytes, Device device, MemoryKind kind,
                                       std::shared_ptr<void> owner) {
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = data;
  s->bytes_ = bytes;
  s->device_ = device;
  s->kind_ = kind;
  s->owner_ = std::move(owner);
  return s;
}

Storage::~Storage() {
  if (allocator_ != nullptr && data_ != nullptr) allocator_->Deallocate(data_, bytes_);
}

// ---- Tensor ----

Tensor Tensor::View(std::shared_ptr<Storage> storage, int64_t offset, const Shape& shape,
                    const Shape& strides, DType dtype) {
  Tensor t;
  t.storage_ = std::move(storage);
  t.offset_ = offset;
  t.shape_ = shape;
  t.strides_ = strides;
  t.dtype_ = dtype;
  return t;
}

Tensor Tensor::Empty(const Shape& shape, DType dtype) {
  auto s = Storage::Allocate(HostAllocator(), ShapeNumel(shape) * DTypeSize(dtype));
  if (!s.ok()) throw std::bad_alloc();
  return View(std::move(s).value(), 0, shape, ContiguousStrides(shape), dtype);
}

Tensor Tensor::Zeros(const Shape& shape, DType dtype) {
  Tensor t = Empty(shape, dtype);
  std::memset(t.raw_data(), 0, t.nbytes());
  return t;
}

StatusOr<Tensor> Tensor::EmptyOn(Device device, const Shape& shape, DType dtype) {
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument("negative dimension in shape " + ShapeToString(shape));
  }
  FS_ASSIGN_OR_RETURN(Allocator * a, AllocatorFor(device));
  FS_ASSIGN_OR_RETURN(auto s, Storage::Allocate(a, ShapeNumel(shape) * DTypeSize(dtype)));
  return View(std::move(s), 0, shape, ContiguousStrides(shape), dtype);
}

StatusOr<Tensor> Tensor::EmptyPinned(const Shape& shape, DType dtype) {
  FS_ASSIGN_OR_RETURN(Allocator * a, PinnedHostAllocator());
  FS_ASSIGN_OR_RETURN(auto s, Storage::Allocate(a, ShapeNumel(shape) * DTypeSize(dtype)));
  return View(std::move(s), 0, shape, ContiguousStrides(shape), dtype);
}

Tensor Tensor::FromBlob(void* data, const Shape& shape, DType dtype, Device device,
                        std::shared_ptr<void> owner, MemoryKind kind) {
  auto s = Storage::Wrap(data, ShapeNumel(shape) * DTypeSize(dtype), device, kind, std::move(owner));
  return View(std::move(s), 0, shape, ContiguousStrides(shape), dtype);
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int i = dim() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

void* Tensor::raw_data() const {
  if (!storage_) return nullptr;
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(DTypeSize(dtype_));
}

void Tensor::assertDType(DType expected) const {
  assert(dtype_ == expected && "Tensor::data<T>() with the wrong T");
  (void)expected;
}

Tensor Tensor::Slice(int d, int64_t start, int64_t end) const {
  if (d < 0) d += dim();
  assert(d >= 0 && d < dim() && start >= 0 && start <= end && end <= shape_[d]);
  Tensor t = *this;
  t.offset_ += start * strides_[d];
  t.shape_[d] = end - start;
  return t;
}

Tensor Tensor::Select(int d, int64_t index) const {
  if (d < 0) d += dim();
  assert(d >= 0 && d < dim() && index >= 0 && index < shape_[d]);
  Tensor t = *this;
  t.offset_ += index * strides_[d];
  t.shape_.erase(t.shape_.begin() + d);
  t.strides_.erase(t.strides_.begin() + d);
  return t;
}

Tensor Tensor::Transpose(int a, int b) const {
  if (a < 0) a += dim();
  if (b < 0) b += dim();
  Tensor t = *this;
  std::swap(t.shape_[a], t.shape_[b]);
  std::swap(t.strides_[a], t.strides_[b]);
  return t;
}

StatusOr<Tensor> Tensor::Reshape(const Shape& shape) const {
  if (ShapeNumel(shape) != numel()) {
    return InvalidArgument("cannot reshape " + ShapeToString(shape_) + " to " + ShapeToString(shape));
  }
  if (!is_contiguous()) return InvalidArgument("Reshape needs a contiguous tensor");
  return View(storage_, offset_, shape, ContiguousStrides(shape), dtype_);
}

namespace {

// Copies a strided host tensor element by element (rare path: views that are
// not contiguous). Contiguous copies use memcpy.
void StridedHostCopy(const Tensor& src, const Tensor& dst) {
  const int nd = src.dim();
  const size_t es = src.element_size();
  std::vector<int64_t> idx(nd, 0);
  const int64_t n = src.numel();
  const char* sbase = static_cast<const char*>(src.raw_data());
  char* dbase = static_cast<char*>(dst.raw_data());
  for (int64_t i = 0; i < n; ++i) {
    int64_t so = 0, dof = 0;
    for (int k = 0; k < nd; ++k) {
      so += idx[k] * src.stride(k);
      dof += idx[k] * dst.stride(k);
    }
    std::memcpy(dbase + dof * es, sbase + so * es, es);
    for (int k = nd - 1; k >= 0; --k) {
      if (++idx[k] < src.size(k)) break;
      idx[k] = 0;
    }
  }
}

}  // namespace

Status Tensor::CopyFrom(const Tensor& src) {
  FS_RETURN_IF_ERROR(CheckDefined(src, "CopyFrom source"));
  if (src.shape() != shape_ || src.dtype() != dtype_) {
    return InvalidArgument("CopyFrom: destination " + ToString() + " but source " + src.ToString());
  }
  if (numel() == 0) return Status::OK();
  const bool src_host = src.device().is_cpu(), dst_host = device().is_cpu();
  if (src_host && dst_host) {
    if (src.is_contiguous() && is_contiguous()) {
      std::memmove(raw_data(), src.raw_data(), nbytes());
    } else {
      StridedHostCopy(src, *this);
    }
    return Status::OK();
  }
  if (!src.is_contiguous() || !is_contiguous()) {
    return Unimplemented("a copy between devices needs contiguous tensors (got " + src.ToString() +
                         " -> " + ToString() + ")");
  }
  return internal::CudaCopy(raw_data(), src.raw_data(), nbytes(), !dst_host, !src_host);
}

StatusOr<Tensor> Tensor::To(Device d) const {
  // A copy between devices moves contiguous bytes: a strided host tensor is
  // packed on the host first.
  if (!is_contiguous() && device().is_cpu() && !d.is_cpu()) {
    FS_ASSIGN_OR_RETURN(const Tensor packed, Contiguous());
    return packed.To(d);
  }
  FS_ASSIGN_OR_RETURN(Tensor out, EmptyOn(d, shape_, dtype_));
  FS_RETURN_IF_ERROR(out.CopyFrom(*this));
  return out;
}

Tensor Tensor::Clone() const {
  assert(device().is_cpu());
  Tensor out = Empty(shape_, dtype_);
  out.CopyFrom(*this).IgnoreError();
  return out;
}

StatusOr<Tensor> Tensor::Contiguous() const {
  if (is_contiguous()) return *this;
  return To(device());
}

Status Tensor::ZeroFill() {
  if (!is_contiguous()) return Fill(0.0);
  if (device().is_cpu()) {
    std::memset(raw_data(), 0, nbytes());
    return Status::OK();
  }
  return internal::CudaMemset(raw_data(), 0, nbytes());
}

Status Tensor::Fill(double value) {
  if (!device().is_cpu()) {
    if (value == 0.0 && is_contiguous()) return ZeroFill();
    return Unimplemented("Fill with a non-zero value on " + device().ToString() + " (use kernels::Fill)");
  }
  if (!is_contiguous()) return Unimplemented("Fill on a non-contiguous tensor");
  const int64_t n = numel();
  switch (dtype_) {
    case DType::kF32: { float* p = data<float>(); for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(value); break; }
    case DType::kF16: { auto* p = static_cast<uint16_t*>(raw_data()); const uint16_t h = FloatToHalf(static_cast<float>(value)); for (int64_t i = 0; i < n; ++i) p[i] = h; break; }
    case DType::kBF16: { auto* p = static_cast<uint16_t*>(raw_data()); const uint16_t h = FloatToBFloat16(static_cast<float>(value)); for (int64_t i = 0; i < n; ++i) p[i] = h; break; }
    case DType::kI32: { int32_t* p = data<int32_t>(); for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(value); break; }
    case DType::kI64: { int64_t* p = data<int64_t>(); for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(value); break; }
    case DType::kU8: { std::memset(raw_data(), static_cast<int>(value), n); break; }
  }
  return Status::OK();
}

std::string Tensor::ToString() const {
  if (!defined()) return "Tensor(undefined)";
  return std::string("Tensor(") + DTypeName(dtype_) + ", " + ShapeToString(shape_) + ", " +
         device().ToString() + ")";
}

Status CheckDefined(const Tensor& t, const char* what) {
  if (!t.defined()) return InvalidArgument(std::string(what) + ": tensor is undefined");
  return Status::OK();
}

Status CheckDType(const Tensor& t, DType dtype, const char* what) {
  FS_RETURN_IF_ERROR(CheckDefined(t, what));
  if (t.dtype() != dtype) {
    return InvalidArgument(std::string(what) + ": expected dtype " + DTypeName(dtype) + ", got " +
                           DTypeName(t.dtype()));
  }
  return Status::OK();
}

Status CheckShape(const Tensor& t, const Shape& shape, const char* what) {
  FS_RETURN_IF_ERROR(CheckDefined(t, what));
  if (t.shape() != shape) {
    return InvalidArgument(std::string(what) + ": expected shape " + ShapeToString(shape) + ", got " +
                           ShapeToString(t.shape()));
  }
  return Status::OK();
}

Status CheckDim(const Tensor& t, int d, const char* what) {
  FS_RETURN_IF_ERROR(CheckDefined(t, what));
  if (t.dim() != d) {
    return InvalidArgument(std::string(what) + ": expected " + std::to_string(d) + " dimensions, got " +
                           ShapeToString(t.shape()));
  }
  return Status::OK();
}

Status CheckContiguous(const Tensor& t, const char* what) {
  FS_RETURN_IF_ERROR(CheckDefined(t, what));
  if (!t.is_contiguous()) return InvalidArgument(std::string(what) + ": expected a contiguous tensor");
  return Status::OK();
}

Status CheckSameDevice(const Tensor& a, const Tensor& b, const char* what) {
  if (a.device() != b.device()) {
    return InvalidArgument(std::string(what) + ": tensors on " + a.device().ToString() + " and " +
                           b.device().ToString());
  }
  return Status::OK();
}

}  // namespace foresight
