// SampleNeighbors: argument checks and device dispatch (see ops.h).
#include <string>

#include "check.h"
#include "foresight/kernels/ops.h"

namespace foresight::kernels {

namespace cpu {
// kernels/src/cpu/sample_neighbors.cc; arguments already checked.
Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors);
}  // namespace cpu

Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors) {
  if (out_indptr == nullptr || out_neighbors == nullptr) {
    return InvalidArgument("SampleNeighbors: output pointer is null");
  }
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(graph, "SampleNeighbors: graph"));
  FS_RETURN_IF_ERROR(internal::CheckIds(seeds, "SampleNeighbors: seeds"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(graph.device(), {&seeds}, "SampleNeighbors"));
  switch (graph.device().type) {
    case DeviceType::kCPU:
      return cpu::SampleNeighbors(ctx, graph, seeds, fanout, key, out_indptr, out_neighbors);
    default:
      return internal::NoImplementation("SampleNeighbors", graph.device());
  }
}

}  // namespace foresight::kernels
