// CUDA runtime seam: pinned host and device allocators, copies. Compiled only
// when the build has CUDA. Device memory goes through a simple size-bucketed
// caching allocator so per-step tensors do not hit cudaMalloc.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "../cuda_runtime_api.h"
#include "foresight/core/device.h"

namespace foresight {

namespace {
Status CudaError(const char* call, cudaError_t err) {
  return Status(err == cudaErrorMemoryAllocation ? StatusCode::kResourceExhausted : StatusCode::kInternal,
                std::string(call) + " failed: " + cudaGetErrorString(err));
}
}  // namespace

bool CudaCompiledIn() { return true; }

int CudaDeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

namespace internal {
namespace {

class PinnedAllocator final : public Allocator {
 public:
  StatusOr<void*> Allocate(size_t bytes) override {
    void* p = nullptr;
    const cudaError_t err = cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable);
    if (err != cudaSuccess) return CudaError("cudaHostAlloc", err);
    return p;
  }
  void Deallocate(void* ptr, size_t) override { cudaFreeHost(ptr); }
  Device device() const override { return Device::Cpu(); }
  MemoryKind kind() const override { return MemoryKind::kPinnedHost; }
};

class CachingDeviceAllocator final : public Allocator {
 public:
  explicit CachingDeviceAllocator(int index) : index_(index) {}
  StatusOr<void*> Allocate(size_t bytes) override {
    const size_t rounded = Round(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(rounded);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        return p;
      }
    }
    cudaSetDevice(index_);
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, rounded);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      ReleaseCached();
      err = cudaMalloc(&p, rounded);
    }
    if (err != cudaSuccess) return CudaError("cudaMalloc", err);
    return p;
  }
  void Deallocate(void* ptr, size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    free_[Round(bytes)].push_back(ptr);
  }
  Device device() const override { return Device::Cuda(index_); }
  MemoryKind kind() const override { return MemoryKind::kDevice; }

 private:
  static size_t Round(size_t bytes) {
    size_t r = 512;
    while (r < bytes) r <<= 1;  // power-of-two buckets bound the waste at 2x
    return r;
  }
  void ReleaseCached() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [size, ptrs] : free_) {
      for (void* p : ptrs) cudaFree(p);
      ptrs.clear();
    }
  }
  int index_;
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
};

}  // namespace

StatusOr<Allocator*> CudaPinnedAllocator() {
  if (CudaDeviceCount() == 0) return Unimplemented("pinned host memory needs a GPU, and none is visible");
  static PinnedAllocator* a = new PinnedAllocator();
  return a;
}

StatusOr<Allocator*> CudaDeviceAllocator(int index) {
  const int n = CudaDeviceCount();
  if (index < 0 || index >= n) {
    return InvalidArgument("cuda:" + std::to_string(index) + " requested but " + std::to_string(n) +
                           " GPU(s) are visible");
  }
  static std::mutex mu;
  static std::map<int, CachingDeviceAllocator*> allocators;
  std::lock_guard<std::mutex> lock(mu);
  auto& a = allocators[index];
  if (a == nullptr) a = new CachingDeviceAllocator(index);
  return a;
}

Status CudaCopy(void* dst, const void* src, size_t bytes, bool dst_on_device, bool src_on_device) {
  const cudaError_t err = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
  if (err != cudaSuccess) return CudaError("cudaMemcpy", err);
  return Status::OK();
}

Status CudaMemset(void* dst, int value, size_t bytes) {
  const cudaError_t err = cudaMemset(dst, value, bytes);
  if (err != cudaSuccess) return CudaError("cudaMemset", err);
  return Status::OK();
}

}  // namespace internal
}  // namespace foresight
