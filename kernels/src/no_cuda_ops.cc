// Built when FORESIGHT_HAVE_CUDA is off: the CUDA entry points refuse with a
// message (a CUDA tensor cannot exist in such a build, but the dispatch
// stays one switch with no #ifdef).
#include "cuda/cuda_ops.h"
#include "keyed_dropout_ops.h"
#include "no_cuda_refusal.h"

namespace foresight::kernels::cuda {

#define FORESIGHT_BACKEND_OP(name, params) \
  Status name params { return NoCuda(#name); }
#include "backend_ops.inc"
#undef FORESIGHT_BACKEND_OP

Status DropoutRows(const ExecContext&, float, const Tensor&, const Tensor&, Tensor*, Tensor*, bool) {
  return NoCuda("DropoutRows");
}

Status DropoutEdgeKeys(const ExecContext&, const Csr&, const Tensor&, Tensor*) {
  return NoCuda("DropoutEdgeKeys");
}

Status SampleNeighbors(const ExecContext&, const Csr&, const Tensor&, int64_t, RngKey, Tensor*, Tensor*, const Tensor*, const SampleSink*, const SampledAhead*, SampledAhead*) {
  return NoCuda("SampleNeighbors");
}

}  // namespace foresight::kernels::cuda
