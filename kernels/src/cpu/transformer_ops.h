// CPU implementations of the ops in foresight/kernels/transformer.h. The
// dispatcher (kernels/src/transformer.cc) has checked dtypes, shapes,
// devices and cu_seqlens; these functions trust them.
#pragma once

#include "foresight/kernels/transformer.h"

namespace foresight::kernels::cpu {

#define FORESIGHT_BACKEND_OP(name, params) Status name params;
#include "../transformer_backend_ops.inc"
#undef FORESIGHT_BACKEND_OP

}  // namespace foresight::kernels::cpu
