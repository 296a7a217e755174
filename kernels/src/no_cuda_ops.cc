// Built when FORESIGHT_HAVE_CUDA is off: the CUDA entry points refuse with a
// message (a CUDA tensor cannot exist in such a build, but the dispatch
// stays one switch with no #ifdef).
#include "cuda/cuda_ops.h"
#include "keyed_dropout_ops.h"
#include "no_cuda_refusal.h"

namespace foresight::kernels::cuda {

Status Gemm(const ExecContext&, const Tensor&, bool, const Tensor&, bool, float, float, Tensor*) {
  return NoCuda("Gemm");
}

Status GatherRows(const ExecContext&, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("GatherRows");
}

Status IndexAddRows(const ExecContext&, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("IndexAddRows");
}

Status ValidateCsr(const Csr&, const char*) {
  return NoCuda("ValidateCsr");
}

Status TransposeCsr(const ExecContext&, const Csr&, Csr*, Tensor*) {
  return NoCuda("TransposeCsr");
}

Status Spmm(const ExecContext&, const Csr&, Reduce, const Tensor&, Tensor*, Tensor*) {
  return NoCuda("Spmm");
}

Status SpmmBackward(const ExecContext&, const Csr&, const Csr&, const Tensor&, Reduce, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("SpmmBackward");
}

Status GcnNormalize(const ExecContext&, const Csr&, Csr*) {
  return NoCuda("GcnNormalize");
}

Status GcnOutDegrees(const ExecContext&, const Csr&, Tensor*) {
  return NoCuda("GcnOutDegrees");
}

Status GcnNormalizeWithOutDegrees(const ExecContext&, const Csr&, const Tensor&, Csr*) {
  return NoCuda("GcnNormalizeWithOutDegrees");
}

Status GatEdgeScores(const ExecContext&, const Csr&, const Tensor&, const Tensor&, float, Tensor*) {
  return NoCuda("GatEdgeScores");
}

Status GatEdgeScoresBackward(const ExecContext&, const Csr&, const Csr&, const Tensor&, const Tensor&, const Tensor&, float, const Tensor&, Tensor*, Tensor*) {
  return NoCuda("GatEdgeScoresBackward");
}

Status EdgeSoftmax(const ExecContext&, const Csr&, const Tensor&, Tensor*) {
  return NoCuda("EdgeSoftmax");
}

Status EdgeSoftmaxBackward(const ExecContext&, const Csr&, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("EdgeSoftmaxBackward");
}

Status SpmmEdgeHeads(const ExecContext&, const Csr&, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("SpmmEdgeHeads");
}

Status SpmmEdgeHeadsBackward(const ExecContext&, const Csr&, const Csr&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, Tensor*, Tensor*) {
  return NoCuda("SpmmEdgeHeadsBackward");
}

Status Add(const ExecContext&, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("Add");
}

Status Axpby(const ExecContext&, float, const Tensor&, float, const Tensor&, Tensor*) {
  return NoCuda("Axpby");
}

Status Mul(const ExecContext&, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("Mul");
}

Status Scale(const ExecContext&, const Tensor&, float, Tensor*) {
  return NoCuda("Scale");
}

Status AddBias(const ExecContext&, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("AddBias");
}

Status SumRows(const ExecContext&, const Tensor&, Tensor*) {
  return NoCuda("SumRows");
}

Status Activate(const ExecContext&, Activation, float, const Tensor&, Tensor*) {
  return NoCuda("Activate");
}

Status ActivateBackward(const ExecContext&, Activation, float, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("ActivateBackward");
}

Status Dropout(const ExecContext&, float, const Tensor&, Tensor*, Tensor*) {
  return NoCuda("Dropout");
}

Status DropoutRows(const ExecContext&, float, const Tensor&, const Tensor&, Tensor*, Tensor*) {
  return NoCuda("DropoutRows");
}

Status DropoutEdgeKeys(const ExecContext&, const Csr&, const Tensor&, Tensor*) {
  return NoCuda("DropoutEdgeKeys");
}

Status DropoutBackward(const ExecContext&, float, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("DropoutBackward");
}

Status LogSoftmax(const ExecContext&, const Tensor&, Tensor*) {
  return NoCuda("LogSoftmax");
}

Status LogSoftmaxBackward(const ExecContext&, const Tensor&, const Tensor&, Tensor*) {
  return NoCuda("LogSoftmaxBackward");
}

Status NllLoss(const ExecContext&, const Tensor&, const Tensor&, float*, Tensor*) {
  return NoCuda("NllLoss");
}

Status Accuracy(const ExecContext&, const Tensor&, const Tensor&, int64_t*, int64_t*) {
  return NoCuda("Accuracy");
}

Status SampleNeighbors(const ExecContext&, const Csr&, const Tensor&, int64_t, RngKey, Tensor*, Tensor*, const Tensor*, const SampleSink*, const SampledAhead*, SampledAhead*) {
  return NoCuda("SampleNeighbors");
}

Status EmbeddingBagForward(const ExecContext&, const EmbeddingRowLayout&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, Pooling, Tensor*) {
  return NoCuda("EmbeddingBagForward");
}

Status EmbeddingBagBackwardUpdate(const ExecContext&, const EmbeddingRowLayout&, const SparseOptimizerConfig&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, Pooling, const Tensor&, Tensor*) {
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
