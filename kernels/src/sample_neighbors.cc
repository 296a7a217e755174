// SampleNeighbors: argument checks and device dispatch (see ops.h).
#include <string>

#include "check.h"
#include "foresight/kernels/ops.h"

namespace foresight::kernels {

namespace cpu {
// kernels/src/cpu/sample_neighbors.cc; arguments already checked (the mask,
// when not null, is u8 [graph.num_src] and contiguous).
Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors, const Tensor* source_mask,
                       const SampleSink* sink);
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

}  // namespace

Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors, const Tensor* source_mask,
                       const SampleSink* sink) {
  if (out_indptr == nullptr || out_neighbors == nullptr) {
    return InvalidArgument("SampleNeighbors: output pointer is null");
  }
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(graph, "SampleNeighbors: graph"));
  FS_RETURN_IF_ERROR(internal::CheckIds(seeds, "SampleNeighbors: seeds"));
  if (source_mask != nullptr) FS_RETURN_IF_ERROR(CheckSourceMask(graph, *source_mask));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(graph.device(), {&seeds, source_mask}, "SampleNeighbors"));
  switch (graph.device().type) {
    case DeviceType::kCPU:
      return cpu::SampleNeighbors(ctx, graph, seeds, fanout, key, out_indptr, out_neighbors, source_mask, sink);
    default:
      return internal::NoImplementation("SampleNeighbors", graph.device());
  }
}

}  // namespace foresight::kernels
