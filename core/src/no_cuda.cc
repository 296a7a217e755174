// Built when FORESIGHT_HAVE_CUDA is off: every CUDA request is refused with a
// message, never served silently from host memory.
#include "cuda_runtime_api.h"
#include "foresight/core/cuda_available.h"
#include "foresight/core/device.h"
#include "no_cuda_refusal.h"

namespace foresight {

bool CudaCompiledIn() { return false; }
int CudaDeviceCount() { return 0; }
Status CudaAvailable() { return internal::NoCuda("a GPU"); }

namespace internal {
StatusOr<Allocator*> CudaPinnedAllocator() { return NoCuda("pinned host memory"); }
StatusOr<Allocator*> CudaDeviceAllocator(int) { return NoCuda("device memory"); }
Status CudaCopy(void*, const void*, size_t, bool, bool) { return NoCuda("a device copy"); }
Status CudaMemset(void*, int, size_t) { return NoCuda("a device memset"); }

}  // namespace internal
}  // namespace foresight
