// CUDA streams by slot: the execution context names a stream by its
// stream_slot, and every CUDA op and copy of that context is queued on the
// stream this header maps the slot to, so no op needs a stream parameter.
// Slot kComputeSlot is the device's legacy default stream (ordered with
// every plain cudaMemcpy, Tensor::CopyFrom included); the other slots are
// non-blocking streams created on first use, for copies that overlap the
// compute (a copy stream) ordered against it by events. The pointers are
// cudaStream_t / cudaEvent_t handles as void*, so this header needs no CUDA
// headers. A build without CUDA answers every call with Unimplemented.
// A tensor may be freed while work on any slot still uses it: the device
// cache fences each freed block with events on every slot and reuses it
// only once they have passed. Thread-safe.
#pragma once

#include <cstddef>

#include "foresight/core/device.h"
#include "foresight/core/status.h"

namespace foresight {

constexpr int kComputeSlot = 0;  // the default stream: ordered with plain copies
constexpr int kCopySlot = 1;     // host <-> device staging copies
constexpr int kCommSlot = 2;     // collectives of the NCCL communicator (nccl_communicator.h)
constexpr int kNumStreamSlots = 4;

// The cudaStream_t of `slot` on GPU `device` (null for kComputeSlot, the
// legacy default stream). InvalidArgument for a slot outside
// [0, kNumStreamSlots) or a device that is not a visible GPU.
StatusOr<void*> CudaStreamFor(Device device, int slot);

// Waits on the host for everything queued on `slot` of `device`.
Status SynchronizeStream(Device device, int slot);

// Copies `bytes` between any two of host, pinned host and device memory,
// queued on `slot` of `device` (asynchronous with respect to the host when
// the host side is pinned; cudaMemcpyAsync's rules otherwise).
Status CopyAsync(void* dst, const void* src, size_t bytes, Device device, int slot);

// An event recorded on one slot that another slot (or the host) waits for:
// the copy stream records after a batch's H2D copies and the compute
// stream waits before the batch's kernels, without blocking the host.
class StreamEvent {
 public:
  // Creates the event on `device` (timing disabled).
  static StatusOr<StreamEvent> Create(Device device);
  StreamEvent() = default;
  StreamEvent(StreamEvent&& other) noexcept;
  StreamEvent& operator=(StreamEvent&& other) noexcept;
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;
  ~StreamEvent();

  // Marks the point reached by `slot`'s queue now.
  Status Record(int slot);
  // Work queued on `slot` after this call starts once the recorded point is reached.
  Status WaitOn(int slot) const;
  // Blocks the host until the recorded point is reached.
  Status Synchronize() const;
  bool valid() const { return event_ != nullptr; }

 private:
  Device device_;
  void* event_ = nullptr;
};

}  // namespace foresight
