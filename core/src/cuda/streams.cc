// Stream slots and events on the CUDA runtime (cuda_streams.h).
#include <cuda_runtime.h>

#include <array>
#include <map>
#include <mutex>
#include <string>

#include "../cuda_runtime_api.h"
#include "foresight/core/cuda_available.h"
#include "foresight/core/cuda_streams.h"

namespace foresight {

namespace {

Status CudaFail(const char* call, cudaError_t err) {
  return Internal(std::string(call) + " failed: " + cudaGetErrorString(err));
}

Status CheckGpu(Device device) {
  if (!device.is_cuda()) return InvalidArgument("stream slots exist on cuda devices only, got " + device.ToString());
  const int n = CudaDeviceCount();
  if (device.index < 0 || device.index >= n) {
    return InvalidArgument(device.ToString() + " requested but " + std::to_string(n) + " GPU(s) are visible" +
                           (n == 0 ? ": " + CudaAvailable().message() : std::string()));
  }
  return Status::OK();
}

}  // namespace

namespace {

// Created once per (device, slot) and kept for the process's life.
std::mutex& StreamsMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
std::map<int, std::array<cudaStream_t, kNumStreamSlots>>& Streams() {
  static auto* streams = new std::map<int, std::array<cudaStream_t, kNumStreamSlots>>;
  return *streams;
}

}  // namespace

StatusOr<void*> CudaStreamFor(Device device, int slot) {
  if (slot < 0 || slot >= kNumStreamSlots) {
    return InvalidArgument("stream slot " + std::to_string(slot) + " is outside [0, " +
                           std::to_string(kNumStreamSlots) + ")");
  }
  FS_RETURN_IF_ERROR(CheckGpu(device));
  if (slot == kComputeSlot) return static_cast<void*>(nullptr);
  std::lock_guard<std::mutex> lock(StreamsMutex());
  auto& row = Streams()[device.index];
  if (row[slot] == nullptr) {
    cudaSetDevice(device.index);
    cudaStream_t s = nullptr;
    const cudaError_t err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (err != cudaSuccess) return CudaFail("cudaStreamCreateWithFlags", err);
    row[slot] = s;
  }
  return static_cast<void*>(row[slot]);
}

namespace internal {
std::vector<void*> CudaSlotStreams(int device) {
  std::vector<void*> out;
  std::lock_guard<std::mutex> lock(StreamsMutex());
  auto it = Streams().find(device);
  if (it == Streams().end()) return out;
  for (cudaStream_t s : it->second) {
    if (s != nullptr) out.push_back(static_cast<void*>(s));
  }
  return out;
}
}  // namespace internal

Status SynchronizeStream(Device device, int slot) {
  FS_ASSIGN_OR_RETURN(void* s, CudaStreamFor(device, slot));
  cudaSetDevice(device.index);
  const cudaError_t err = cudaStreamSynchronize(static_cast<cudaStream_t>(s));
  return err == cudaSuccess ? Status::OK() : CudaFail("cudaStreamSynchronize", err);
}

Status CopyAsync(void* dst, const void* src, size_t bytes, Device device, int slot) {
  FS_ASSIGN_OR_RETURN(void* s, CudaStreamFor(device, slot));
  if (bytes == 0) return Status::OK();
  cudaSetDevice(device.index);
  const cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(s));
  return err == cudaSuccess ? Status::OK() : CudaFail("cudaMemcpyAsync", err);
}

StatusOr<StreamEvent> StreamEvent::Create(Device device) {
  FS_RETURN_IF_ERROR(CheckGpu(device));
  cudaSetDevice(device.index);
  cudaEvent_t e = nullptr;
  const cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (err != cudaSuccess) return CudaFail("cudaEventCreateWithFlags", err);
  StreamEvent ev;
  ev.device_ = device;
  ev.event_ = e;
  return ev;
}

StreamEvent::StreamEvent(StreamEvent&& other) noexcept : device_(other.device_), event_(other.event_) {
  other.event_ = nullptr;
}

StreamEvent& StreamEvent::operator=(StreamEvent&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
    device_ = other.device_;
    event_ = other.event_;
    other.event_ = nullptr;
  }
  return *this;
}

StreamEvent::~StreamEvent() {
  if (event_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
}

Status StreamEvent::Record(int slot) {
  if (event_ == nullptr) return InvalidArgument("StreamEvent::Record on an event that was never created");
  FS_ASSIGN_OR_RETURN(void* s, CudaStreamFor(device_, slot));
  const cudaError_t err = cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(s));
  return err == cudaSuccess ? Status::OK() : CudaFail("cudaEventRecord", err);
}

Status StreamEvent::WaitOn(int slot) const {
  if (event_ == nullptr) return InvalidArgument("StreamEvent::WaitOn on an event that was never created");
  FS_ASSIGN_OR_RETURN(void* s, CudaStreamFor(device_, slot));
  const cudaError_t err = cudaStreamWaitEvent(static_cast<cudaStream_t>(s), static_cast<cudaEvent_t>(event_), 0);
  return err == cudaSuccess ? Status::OK() : CudaFail("cudaStreamWaitEvent", err);
}

Status StreamEvent::Synchronize() const {
  if (event_ == nullptr) return InvalidArgument("StreamEvent::Synchronize on an event that was never created");
  const cudaError_t err = cudaEventSynchronize(static_cast<cudaEvent_t>(event_));
  return err == cudaSuccess ? Status::OK() : CudaFail("cudaEventSynchronize", err);
}

}  // namespace foresight
