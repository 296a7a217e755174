// SampleNeighbors: argument checks and device dispatch (see ops.h).
#include <string>

#include "check.h"
#include "cuda/cuda_ops.h"
#include "foresight/kernels/ops.h"

namespace foresight::kernels {

namespace cpu {
// kernels/src/cpu/sample_neighbors.cc; arguments already checked (the mask,
// when not null, is u8 [graph.num_src] and contiguous).
Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors, const Tensor* source_mask,
                       const SampleSink* sink, const SampledAhead* drawn, SampledAhead* ahead);
}  // namespace cpu

namespace {

Status CheckSourceMask(const Csr& graph, const Tensor& mask) {
  const char* what = "SampleNeighbors: source_mask";
  FS_RETURN_IF_ERROR(CheckDefined(mask, what));
  FS_RETURN_IF_ERROR(CheckDType(mask, DType::kU8, what));
  FS_RETURN_IF_ERROR(CheckDim(mask, 1, what));
  FS_RETURN_IF_ERROR(CheckContiguous(mask, what));
  if (mask.size(0) != graph.num_src) {
    return InvalidArgument("SampleNeighbors: source_mask has " + std::to_string(mask.size(0)) +
                           " entries, expected one per graph source node (" + std::to_string(graph.num_src) +
                           ")");
  }
  return Status::OK();
}

// Draws made ahead must be this call's: its hop, and no more seeds than it
// has.
Status CheckDrawn(const SampledAhead& drawn, const Tensor& seeds, int64_t fanout, RngKey key) {
  if (drawn.num_seeds < 0 || drawn.num_seeds > seeds.size(0) || drawn.fanout != fanout || drawn.key.key != key.key) {
    return InvalidArgument("SampleNeighbors: drawn holds " + std::to_string(drawn.num_seeds) +
                           " seeds' draws for fanout " + std::to_string(drawn.fanout) +
                           ", expected at most " + std::to_string(seeds.size(0)) + " seeds' for fanout " +
                           std::to_string(fanout) + (drawn.key.key != key.key ? " (and another key)" : ""));
  }
  return Status::OK();
}

}  // namespace

Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors, const Tensor* source_mask,
                       const SampleSink* sink, const SampledAhead* drawn, SampledAhead* ahead) {
  if (out_indptr == nullptr || out_neighbors == nullptr) {
    return InvalidArgument("SampleNeighbors: output pointer is null");
  }
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(graph, "SampleNeighbors: graph"));
  FS_RETURN_IF_ERROR(internal::CheckIds(seeds, "SampleNeighbors: seeds"));
  if (source_mask != nullptr) FS_RETURN_IF_ERROR(CheckSourceMask(graph, *source_mask));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(graph.device(), {&seeds, source_mask}, "SampleNeighbors"));
  if (drawn != nullptr) FS_RETURN_IF_ERROR(CheckDrawn(*drawn, seeds, fanout, key));
  switch (graph.device().type) {
    case DeviceType::kCPU:
      return cpu::SampleNeighbors(ctx, graph, seeds, fanout, key, out_indptr, out_neighbors, source_mask, sink,
                                  drawn, ahead);
    case DeviceType::kCUDA:
      return cuda::SampleNeighbors(ctx, graph, seeds, fanout, key, out_indptr, out_neighbors, source_mask, sink,
                                   drawn, ahead);
    default:
      return internal::NoImplementation("SampleNeighbors", graph.device());
  }
}

}  // namespace foresight::kernels
