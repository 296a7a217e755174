// The refusal every CUDA entry point of core gives when FORESIGHT_HAVE_CUDA
// is off (no_cuda.cc, no_cuda_streams.cc): one message, so a user sees the
// same advice whichever call met the missing device first.
#pragma once

#include <string>

#include "foresight/core/status.h"

namespace foresight::internal {

// Unimplemented: `what` ("a device copy") needs CUDA, with how to get it.
inline Status NoCuda(const char* what) {
  return Unimplemented(std::string(what) +
                       " needs CUDA, but this foresight build has no CUDA device "
                       "(rebuild with -DFORESIGHT_CUDA=ON where nvcc is installed)");
}

}  // namespace foresight::internal
