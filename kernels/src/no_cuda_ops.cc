// Built when FORESIGHT_HAVE_CUDA is off: the CUDA entry points refuse with a
// message (a CUDA tensor cannot exist in such a build, but the dispatch
// stays one switch with no #ifdef).
#include <string>

#include "cuda/cuda_ops.h"

namespace foresight::kernels::cuda {

namespace {
Status NoCuda(const char* op) {
  return Unimplemented(std::string(op) +
                       " on cuda: this foresight build has no CUDA device (rebuild with -DFORESIGHT_CUDA=ON)");
}
}  // namespace

Status EmbeddingBagForward(const ExecContext&, const EmbeddingRowLayout&, const Tensor&, const Tensor&,
                           const Tensor&, const Tensor&, const Tensor&, Pooling, Tensor*) {
  return NoCuda("EmbeddingBagForward");
}

Status EmbeddingBagBackwardUpdate(const ExecContext&, const EmbeddingRowLayout&, const SparseOptimizerConfig&,
                                  const Tensor&, const Tensor&, const Tensor&, const Tensor&, Pooling, const Tensor&,
                                  Tensor*) {
  return NoCuda("EmbeddingBagBackwardUpdate");
}

Status FeatureInteraction(const ExecContext&, Interaction, int64_t, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("FeatureInteraction");
}

Status FeatureInteractionBackward(const ExecContext&, Interaction, int64_t, const Tensor&, const Tensor&,
                                  const Tensor&, Tensor*, Tensor*) {
  return NoCuda("FeatureInteractionBackward");
}

Status BceWithLogits(const ExecContext&, const Tensor&, const Tensor&, float*, Tensor*) {
  return NoCuda("BceWithLogits");
}

}  // namespace foresight::kernels::cuda
