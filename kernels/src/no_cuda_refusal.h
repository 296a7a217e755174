// The refusal of the kernels' CUDA entry points when FORESIGHT_HAVE_CUDA is
// off (no_cuda_ops.cc, no_cuda_transformer.cc): one message for every op.
#pragma once

#include <string>

#include "foresight/core/status.h"

namespace foresight::kernels::cuda {

// Unimplemented naming `op` ("Gemm") and how to get a CUDA build.
inline Status NoCuda(const char* op) {
  return Unimplemented(std::string(op) +
                       " on cuda: this foresight build has no CUDA device (rebuild with -DFORESIGHT_CUDA=ON)");
}

}  // namespace foresight::kernels::cuda
