// CUDA twins of the ops in foresight/kernels/transformer.h (cuda/attention.cu,
// layer_norm.cu, gelu.cu), tested against the CPU ones. A build without CUDA
// links no_cuda_transformer.cc, whose functions return Unimplemented. The
// dispatchers (kernels/src/attention.cc, layer_norm.cc, gelu.cc) have checked
// dtypes, shapes, devices and the shape of cu_seqlens; these functions trust
// them. They run on the default stream and return once their work is queued
// (the backward passes wait for their scratch buffers to be free).
#pragma once

#include "foresight/kernels/transformer.h"

namespace foresight::kernels::cuda {

#define FORESIGHT_BACKEND_OP(name, params) Status name params;
#include "../transformer_backend_ops.inc"
#undef FORESIGHT_BACKEND_OP

}  // namespace foresight::kernels::cuda
