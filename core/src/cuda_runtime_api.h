// The seam between core and the CUDA runtime. Implemented by cuda/runtime.cc
// in CUDA builds and by no_cuda.cc otherwise, which answers every call with
// an Unimplemented status that says the build has no CUDA.
#pragma once

#include <cstddef>
#include <vector>

#include "foresight/core/allocator.h"

namespace foresight::internal {

StatusOr<Allocator*> CudaPinnedAllocator();
StatusOr<Allocator*> CudaDeviceAllocator(int index);
// cudaMemcpy with the direction inferred; `stream_slot` < 0 = synchronous.
Status CudaCopy(void* dst, const void* src, size_t bytes, bool dst_on_device, bool src_on_device);
Status CudaMemset(void* dst, int value, size_t bytes);
// The non-blocking streams created so far for GPU `device`'s stream slots
// (cudaStream_t as void*; slot 0, the legacy default stream, is not
// listed). CUDA builds only (cuda/streams.cc).
std::vector<void*> CudaSlotStreams(int device);

}  // namespace foresight::internal
