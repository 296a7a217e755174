// CUDA runtime seam: pinned host and device allocators, copies. Compiled only
// when the build has CUDA. Device memory goes through a simple size-bucketed
// caching allocator so per-step tensors do not hit cudaMalloc; a freed block
// is fenced by events on every stream slot (fenced_free_list.h), so work on
// one stream never gets a block another stream's queued work still uses.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "../cuda_runtime_api.h"
#include "../fenced_free_list.h"
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

// The fence of a freed device block: one event recorded at the free on the
// legacy default stream and on every stream slot created so far, so the
// block is reused only after all work queued before its free has run,
// whichever stream queued it. Events come from and go back to a pool.
class EventFence {
 public:
  EventFence(std::vector<cudaEvent_t> events, std::vector<cudaEvent_t>* pool)
      : events_(std::move(events)), pool_(pool) {}
  bool Passed() {
    while (!events_.empty()) {
      const cudaError_t q = cudaEventQuery(events_.back());
      if (q == cudaErrorNotReady) return false;
      if (q != cudaSuccess) cudaGetLastError();  // a failed query: the event is gone, not pending
      pool_->push_back(events_.back());
      events_.pop_back();
    }
    return true;
  }
  void Release() {
    for (cudaEvent_t e : events_) pool_->push_back(e);
    events_.clear();
  }

 private:
  std::vector<cudaEvent_t> events_;
  std::vector<cudaEvent_t>* pool_;
};

class CachingDeviceAllocator final : public Allocator {
 public:
  explicit CachingDeviceAllocator(int index) : index_(index) {}
  StatusOr<void*> Allocate(size_t bytes) override {
    const size_t rounded = Round(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (void* p = free_.Take(rounded)) return p;
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
    std::vector<cudaStream_t> streams = {nullptr};  // the legacy default stream
    for (void* s : CudaSlotStreams(index_)) streams.push_back(static_cast<cudaStream_t>(s));
    std::lock_guard<std::mutex> lock(mu_);
    int caller_device = index_;
    cudaGetDevice(&caller_device);
    cudaSetDevice(index_);  // events belong to the block's GPU
    std::vector<cudaEvent_t> events;
    for (cudaStream_t s : streams) {
      cudaEvent_t e = nullptr;
      if (!events_.empty()) {
        e = events_.back();
        events_.pop_back();
      } else if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
        cudaGetLastError();
        continue;  // no event: fall back to a full sync before reuse, below
      }
      if (cudaEventRecord(e, s) != cudaSuccess) {
        cudaGetLastError();
        events_.push_back(e);
        continue;
      }
      events.push_back(e);
    }
    if (events.size() < streams.size()) {
      // Could not fence every stream (the driver is shutting down or out of
      // resources): wait for the device instead of risking a reuse.
      cudaDeviceSynchronize();
      cudaGetLastError();
    }
    free_.Push(Round(bytes), ptr, EventFence(std::move(events), &events_));
    cudaSetDevice(caller_device);
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
    cudaSetDevice(index_);
    cudaDeviceSynchronize();  // every fence passes: the blocks are idle
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [p, size] : free_.TakeAll()) cudaFree(p);
  }
  int index_;
  std::mutex mu_;
  FencedFreeList<EventFence> free_;   // guarded by mu_
  std::vector<cudaEvent_t> events_;  // idle events; guarded by mu_
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
