// CUDA implementations of ops in foresight/kernels/ops.h (kernels/src/cuda/
// <op>.cu). The dispatchers have checked dtypes, shapes and that every
// operand is on one CUDA device. A build without CUDA links
// kernels/src/no_cuda_ops.cc instead, whose functions return Unimplemented.
#pragma once

#include "foresight/kernels/ops.h"

namespace foresight::kernels::cuda {

#define FORESIGHT_BACKEND_OP(name, params) Status name params;
#include "../backend_ops.inc"
#undef FORESIGHT_BACKEND_OP

// The graph lives on the GPU; seeds too. sink, drawn and ahead are
// CPU-pipeline features: with any of them set the op returns Unimplemented.
Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors, const Tensor* source_mask,
                       const SampleSink* sink, const SampledAhead* drawn, SampledAhead* ahead);

}  // namespace foresight::kernels::cuda
