// Argument checks shared by the op dispatchers (kernels/src/<op>.cc). Each
// returns InvalidArgument naming the op's argument and what was expected.
#pragma once

#include <initializer_list>
#include <string>

#include "foresight/core/context.h"
#include "foresight/core/tensor.h"
#include "foresight/kernels/csr.h"

namespace foresight::kernels::internal {

// Defined, f32 and contiguous.
Status CheckF32(const Tensor& t, const char* what);
// CheckF32 plus an exact shape.
Status CheckF32Shape(const Tensor& t, const Shape& shape, const char* what);
// An output pointer that is non-null, contiguous, of `dtype` and `shape`.
Status CheckOutput(const Tensor* t, const Shape& shape, DType dtype, const char* what);
// i32 or i64, 1-D, contiguous.
Status CheckIds(const Tensor& t, const char* what);
// Dtypes, dimensions and sizes of a Csr (not its values: see ValidateCsr).
Status CheckCsrShape(const Csr& csr, const char* what);
// Every defined tensor in `ts` lives on `device`.
Status CheckOnDevice(Device device, std::initializer_list<const Tensor*> ts, const char* op);
// The Status an op returns for a device it has no implementation for.
Status NoImplementation(const char* op, Device device);
// csr_t (and edge_perm when not null) match TransposeCsr(csr) in shape.
Status CheckTranspose(const char* op, const Csr& csr, const Csr& csr_t, const Tensor* edge_perm);
// Embedding bags' table offsets, read on the host (T + 1 values): from 0 or
// more, never decreasing, ending within the `rows` rows of the weights.
Status CheckTableOffsetValues(const char* op, const int64_t* table_offsets, int64_t tables, int64_t rows);
}  // namespace foresight::kernels::internal
