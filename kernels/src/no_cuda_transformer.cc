// Built when FORESIGHT_HAVE_CUDA is off: the transformer ops' CUDA entry
// points refuse with a message (no CUDA tensor can exist in such a build,
// but the dispatchers stay one switch with no #ifdef).
#include "cuda/transformer_ops.h"
#include "no_cuda_refusal.h"

namespace foresight::kernels::cuda {

#define FORESIGHT_BACKEND_OP(name, params) \
  Status name params { return NoCuda(#name); }
#include "transformer_backend_ops.inc"
#undef FORESIGHT_BACKEND_OP

}  // namespace foresight::kernels::cuda
