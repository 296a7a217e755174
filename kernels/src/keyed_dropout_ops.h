// The backends' keyed dropout (keyed_dropout.h), declared apart from
// cpu_ops.h and cuda_ops.h, which every kernel includes.
#pragma once

#include "foresight/kernels/keyed_dropout.h"

namespace foresight::kernels {
// relu: ReluDropoutRows (the dropout of ReLU(x)), else DropoutRows.
namespace cpu {
Status DropoutRows(const ExecContext& ctx, float p, const Tensor& x, const Tensor& row_ids, Tensor* out,
                   Tensor* mask, bool relu);
Status DropoutEdgeKeys(const ExecContext& ctx, const Csr& csr, const Tensor& src_ids, Tensor* keys);
Status GatherRowsDropout(const ExecContext& ctx, float p, const Tensor& src, const Tensor& ids, Tensor* out);
}  // namespace cpu
namespace cuda {
Status DropoutRows(const ExecContext& ctx, float p, const Tensor& x, const Tensor& row_ids, Tensor* out,
                   Tensor* mask, bool relu);
Status DropoutEdgeKeys(const ExecContext& ctx, const Csr& csr, const Tensor& src_ids, Tensor* keys);
}  // namespace cuda
}  // namespace foresight::kernels
