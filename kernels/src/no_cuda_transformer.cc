// Built when FORESIGHT_HAVE_CUDA is off: the transformer ops' CUDA entry
// points refuse with a message (no CUDA tensor can exist in such a build,
// but the dispatchers stay one switch with no #ifdef).
#include "cuda/transformer_ops.h"
#include "no_cuda_refusal.h"

namespace foresight::kernels::cuda {

Status VarlenAttention(const ExecContext&, const AttentionOptions&, const Tensor&, const Tensor&, const Tensor&,
                       const Tensor&, int64_t, Tensor*, Tensor*) {
  return NoCuda("VarlenAttention");
}
Status VarlenAttentionBackward(const ExecContext&, const AttentionOptions&, const Tensor&, const Tensor&,
                               const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t,
                               Tensor*, Tensor*, Tensor*) {
  return NoCuda("VarlenAttentionBackward");
}
Status LayerNorm(const ExecContext&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, float,
                 Tensor*, Tensor*, Tensor*, Tensor*) {
  return NoCuda("LayerNorm");
}
Status LayerNormBackward(const ExecContext&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                         Tensor*, Tensor*, Tensor*) {
  return NoCuda("LayerNormBackward");
}
Status Gelu(const ExecContext&, GeluForm, const Tensor&, const Tensor&, Tensor*) { return NoCuda("Gelu"); }
Status GeluBackward(const ExecContext&, GeluForm, const Tensor&, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("GeluBackward");
}

}  // namespace foresight::kernels::cuda
