// Built when FORESIGHT_HAVE_CUDA is off: stream slots and events are
// refused with a message (no CUDA tensor can exist in such a build).
#include "foresight/core/cuda_streams.h"
#include "no_cuda_refusal.h"

namespace foresight {

using internal::NoCuda;

StatusOr<void*> CudaStreamFor(Device, int) { return NoCuda("a CUDA stream"); }
Status SynchronizeStream(Device, int) { return NoCuda("a CUDA stream"); }
Status CopyAsync(void*, const void*, size_t, Device, int) { return NoCuda("an asynchronous device copy"); }
StatusOr<StreamEvent> StreamEvent::Create(Device) { return NoCuda("a CUDA event"); }
StreamEvent::StreamEvent(StreamEvent&& other) noexcept : device_(other.device_), event_(other.event_) {
  other.event_ = nullptr;
}
StreamEvent& StreamEvent::operator=(StreamEvent&& other) noexcept {
  device_ = other.device_;
  event_ = other.event_;
  other.event_ = nullptr;
  return *this;
}
StreamEvent::~StreamEvent() = default;
Status StreamEvent::Record(int) { return NoCuda("a CUDA event"); }
Status StreamEvent::WaitOn(int) const { return NoCuda("a CUDA event"); }
Status StreamEvent::Synchronize() const { return NoCuda("a CUDA event"); }

}  // namespace foresight
