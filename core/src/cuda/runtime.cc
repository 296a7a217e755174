// CUDA runtime seam: pinned host and device allocators, copies. Compiled only
// when the build has CUDA. Device memory goes through a simple size-bucketed
// caching allocator so per-step tensors do not hit cudaMalloc, and pinned
// host memory through one too (cudaHostAlloc costs milliseconds); a freed
// block is fenced by events on every stream slot (fenced_free_list.h), so
// work on one stream never gets a block another stream's queued work (a
// kernel, an asynchronous copy from a staging buffer) still uses.
//
// The runtime is linked statically (CUDA::cudart_static): it opens the
// driver, libcuda.so.1, on its first call, so a process that never asks for
// a GPU maps no CUDA library (cuBLAS is opened on first use too:
// kernels/src/cuda/cublas_library.h).
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "../cuda_runtime_api.h"
#include "../fenced_free_list.h"
#include "foresight/core/caching_allocator.h"
#include "foresight/core/cuda_available.h"
#include "foresight/core/device.h"

namespace foresight {

namespace {
Status CudaError(const char* call, cudaError_t err) {
  return Status(err == cudaErrorMemoryAllocation ? StatusCode::kResourceExhausted : StatusCode::kInternal,
                std::string(call) + " failed: " + cudaGetErrorString(err));
}
}  // namespace

bool CudaCompiledIn() { return true; }

namespace {

// How many GPUs this process can use, and why none when none; found once.
struct GpuProbe {
  int count = 0;
  Status why_none;
};

GpuProbe ProbeGpus() {
  GpuProbe p;
  // The static runtime would open the driver itself, but its error for a
  // missing one ("CUDA driver version is insufficient") hides the reason:
  // opening it here first keeps dlerror's words. The runtime's own open
  // then finds it loaded.
  dlerror();
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) == nullptr) {
    const char* e = dlerror();
    p.why_none = FailedPrecondition(std::string("the CUDA driver library libcuda.so.1 could not be loaded: ") +
                                    (e != nullptr ? e : "dlopen failed") +
                                    " (is the NVIDIA driver installed and its folder on the library path?)");
    return p;
  }
  const cudaError_t err = cudaGetDeviceCount(&p.count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    p.count = 0;
    p.why_none = FailedPrecondition(std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err));
  } else if (p.count == 0) {
    p.why_none = FailedPrecondition("the CUDA driver reports no GPU (CUDA_VISIBLE_DEVICES may hide them)");
  }
  return p;
}

const GpuProbe& Gpus() {
  static const GpuProbe probe = ProbeGpus();
  return probe;
}

}  // namespace

int CudaDeviceCount() { return Gpus().count; }

Status CudaAvailable() { return Gpus().why_none; }

namespace internal {
namespace {

// The fence of a freed block: one event recorded at the free on the legacy
// default stream and on every stream slot created so far, of each GPU that
// may use the block, so the block is reused only after all work queued
// before its free has run, whichever stream queued it. Events come from and
// go back to a pool.
class EventFence {
 public:
  using Pools = std::map<int, std::vector<cudaEvent_t>>;  // idle events per GPU
  EventFence(std::vector<std::pair<int, cudaEvent_t>> events, Pools* pools)
      : events_(std::move(events)), pools_(pools) {}
  bool Passed() {
    while (!events_.empty()) {
      const cudaError_t q = cudaEventQuery(events_.back().second);
      if (q == cudaErrorNotReady) return false;
      if (q != cudaSuccess) cudaGetLastError();  // a failed query: the event is gone, not pending
      (*pools_)[events_.back().first].push_back(events_.back().second);
      events_.pop_back();
    }
    return true;
  }
  void Release() {
    for (const auto& [d, e] : events_) (*pools_)[d].push_back(e);
    events_.clear();
  }

 private:
  std::vector<std::pair<int, cudaEvent_t>> events_;  // (GPU, event)
  Pools* pools_;
};

// How a FencedCachingAllocator gets and returns raw blocks.
struct RawMemory {
  MemoryKind kind;
  Device device;
  const char* alloc_call;
  cudaError_t (*alloc)(void** p, size_t bytes);
  cudaError_t (*free)(void* p);
  size_t (*round)(size_t bytes);
};

// A caching allocator whose freed blocks are fenced by events on every
// stream of `fence_devices` (fenced_free_list.h): device memory of one GPU,
// or pinned host memory, which copies on any GPU may still read.
class FencedCachingAllocator final : public Allocator {
 public:
  FencedCachingAllocator(RawMemory raw, std::vector<int> fence_devices)
      : raw_(raw), fence_devices_(std::move(fence_devices)) {}
  StatusOr<void*> Allocate(size_t bytes) override {
    const size_t rounded = raw_.round(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (void* p = free_.Take(rounded)) return p;
    }
    if (raw_.kind == MemoryKind::kDevice) cudaSetDevice(raw_.device.index);
    void* p = nullptr;
    cudaError_t err = raw_.alloc(&p, rounded);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      ReleaseCached();
      err = raw_.alloc(&p, rounded);
    }
    if (err != cudaSuccess) return CudaError(raw_.alloc_call, err);
    return p;
  }
  void Deallocate(void* ptr, size_t bytes) override {
    std::vector<std::pair<int, cudaStream_t>> streams;
    for (int d : fence_devices_) {
      streams.emplace_back(d, nullptr);  // the legacy default stream
      for (void* s : CudaSlotStreams(d)) streams.emplace_back(d, static_cast<cudaStream_t>(s));
    }
    std::lock_guard<std::mutex> lock(mu_);
    int caller_device = 0;
    cudaGetDevice(&caller_device);
    std::vector<std::pair<int, cudaEvent_t>> events;
    bool fenced = true;
    for (const auto& [d, s] : streams) {
      cudaSetDevice(d);  // an event belongs to its stream's GPU
      std::vector<cudaEvent_t>& pool = events_[d];
      cudaEvent_t e = nullptr;
      if (!pool.empty()) {
        e = pool.back();
        pool.pop_back();
      } else if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
        cudaGetLastError();
        fenced = false;
        continue;
      }
      if (cudaEventRecord(e, s) != cudaSuccess) {
        cudaGetLastError();
        pool.push_back(e);
        fenced = false;
        continue;
      }
      events.emplace_back(d, e);
    }
    if (!fenced) {
      // Could not fence every stream (the driver is shutting down or out of
      // resources): wait for the GPUs instead of risking a reuse.
      for (int d : fence_devices_) {
        cudaSetDevice(d);
        cudaDeviceSynchronize();
      }
      cudaGetLastError();
    }
    cudaSetDevice(caller_device);
    free_.Push(raw_.round(bytes), ptr, EventFence(std::move(events), &events_));
  }
  Device device() const override { return raw_.device; }
  MemoryKind kind() const override { return raw_.kind; }

 private:
  void ReleaseCached() {
    for (int d : fence_devices_) {
      cudaSetDevice(d);
      cudaDeviceSynchronize();  // every fence passes: the blocks are idle
    }
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [p, size] : free_.TakeAll()) raw_.free(p);
  }

  const RawMemory raw_;
  const std::vector<int> fence_devices_;
  std::mutex mu_;
  FencedFreeList<EventFence> free_;  // guarded by mu_
  EventFence::Pools events_;         // idle events per GPU; guarded by mu_
};

cudaError_t PinnedAlloc(void** p, size_t bytes) {
  return cudaHostAlloc(p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable);
}
cudaError_t PinnedFree(void* p) { return cudaFreeHost(p); }
cudaError_t DeviceAlloc(void** p, size_t bytes) { return cudaMalloc(p, bytes); }
cudaError_t DeviceFree(void* p) { return cudaFree(p); }
// Device blocks: power-of-two buckets bound the waste at 2x.
size_t PowerOfTwo(size_t bytes) {
  size_t r = 512;
  while (r < bytes) r <<= 1;
  return r;
}
// Pinned host memory is scarcer: the host cache's classes (four per power
// of two, at most 25% slack).
size_t HostClass(size_t bytes) { return CachingHostAllocator::SizeClass(std::max<size_t>(bytes, 4096)); }

}  // namespace

StatusOr<Allocator*> CudaPinnedAllocator() {
  const int n = CudaDeviceCount();
  if (n == 0) return Unimplemented("pinned host memory needs a GPU, and none is visible: " + CudaAvailable().message());
  // Fenced on every GPU's streams: a copy on any of them may read the block.
  static Allocator* a = [n] {
    std::vector<int> all;
    for (int d = 0; d < n; ++d) all.push_back(d);
    return new FencedCachingAllocator(
        RawMemory{MemoryKind::kPinnedHost, Device::Cpu(), "cudaHostAlloc", PinnedAlloc, PinnedFree, HostClass}, all);
  }();
  return a;
}

StatusOr<Allocator*> CudaDeviceAllocator(int index) {
  const int n = CudaDeviceCount();
  if (index < 0 || index >= n) {
    return InvalidArgument("cuda:" + std::to_string(index) + " requested but " + std::to_string(n) +
                           " GPU(s) are visible" + (n == 0 ? ": " + CudaAvailable().message() : std::string()));
  }
  static std::mutex mu;
  static std::map<int, Allocator*> allocators;
  std::lock_guard<std::mutex> lock(mu);
  auto& a = allocators[index];
  if (a == nullptr) {
    a = new FencedCachingAllocator(
        RawMemory{MemoryKind::kDevice, Device::Cuda(index), "cudaMalloc", DeviceAlloc, DeviceFree, PowerOfTwo},
        {index});
  }
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
