#include "check.h"

namespace foresight::kernels::internal {

Status CheckF32(const Tensor& t, const char* what) {
  FS_RETURN_IF_ERROR(CheckDType(t, DType::kF32, what));
  return CheckContiguous(t, what);
}

Status CheckF32Shape(const Tensor& t, const Shape& shape, const char* what) {
  FS_RETURN_IF_ERROR(CheckF32(t, what));
  return CheckShape(t, shape, what);
}

Status CheckOutput(const Tensor* t, const Shape& shape, DType dtype, const char* what) {
  if (t == nullptr) return InvalidArgument(std::string(what) + ": output pointer is null");
  FS_RETURN_IF_ERROR(CheckDType(*t, dtype, what));
  FS_RETURN_IF_ERROR(CheckShape(*t, shape, what));
  return CheckContiguous(*t, what);
}

Status CheckIds(const Tensor& t, const char* what) {
  FS_RETURN_IF_ERROR(CheckDefined(t, what));
  if (t.dtype() != DType::kI32 && t.dtype() != DType::kI64) {
    return InvalidArgument(std::string(what) + ": expected dtype i32 or i64, got " + DTypeName(t.dtype()));
  }
  FS_RETURN_IF_ERROR(CheckDim(t, 1, what));
  return CheckContiguous(t, what);
}

Status CheckCsrShape(const Csr& csr, const char* what) {
  const std::string w(what);
  FS_RETURN_IF_ERROR(CheckDType(csr.indptr, DType::kI64, (w + ".indptr").c_str()));
  FS_RETURN_IF_ERROR(CheckDim(csr.indptr, 1, (w + ".indptr").c_str()));
  FS_RETURN_IF_ERROR(CheckContiguous(csr.indptr, (w + ".indptr").c_str()));
  if (csr.indptr.size(0) < 1) return InvalidArgument(w + ".indptr: expected at least 1 element, got 0");
  FS_RETURN_IF_ERROR(CheckIds(csr.indices, (w + ".indices").c_str()));
  if (csr.num_src < 0) {
    return InvalidArgument(w + ": num_src is negative (" + std::to_string(csr.num_src) + ")");
  }
  if (csr.edge_weight.defined()) {
    FS_RETURN_IF_ERROR(CheckF32Shape(csr.edge_weight, {csr.num_edges()}, (w + ".edge_weight").c_str()));
  }
  return CheckOnDevice(csr.indptr.device(), {&csr.indices, &csr.edge_weight}, what);
}

Status CheckOnDevice(Device device, std::initializer_list<const Tensor*> ts, const char* op) {
  for (const Tensor* t : ts) {
    if (t != nullptr && t->defined() && t->device() != device) {
      return InvalidArgument(std::string(op) + ": tensors on " + device.ToString() + " and " +
                             t->device().ToString() + " (all operands must share one device)");
    }
  }
  return Status::OK();
}

Status NoImplementation(const char* op, Device device) {
  return Unimplemented(std::string(op) + " on " + device.ToString() +
                       ": no implementation for this device yet; run it on cpu");
}

// csr_t and edge_perm as TransposeCsr(csr) returns them (shapes only).
Status CheckTranspose(const char* op, const Csr& csr, const Csr& csr_t, const Tensor* edge_perm) {
  const std::string o(op);
  FS_RETURN_IF_ERROR(CheckCsrShape(csr_t, (o + ": csr_t").c_str()));
  if (csr_t.num_dst() != csr.num_src || csr_t.num_src != csr.num_dst() ||
      csr_t.num_edges() != csr.num_edges()) {
    return InvalidArgument(o + ": csr_t is not the transpose of csr: csr has " +
                           std::to_string(csr.num_dst()) + " destinations, " + std::to_string(csr.num_src) +
                           " sources and " + std::to_string(csr.num_edges()) + " edges; csr_t has " +
                           std::to_string(csr_t.num_dst()) + " destinations, " +
                           std::to_string(csr_t.num_src) + " sources and " +
                           std::to_string(csr_t.num_edges()) + " edges");
  }
  if (csr_t.indices.dtype() != csr.indices.dtype()) {
    return InvalidArgument(o + ": csr_t.indices has dtype " + DTypeName(csr_t.indices.dtype()) +
                           " but csr.indices has " + DTypeName(csr.indices.dtype()) + " (pass TransposeCsr(csr))");
  }
  if (edge_perm != nullptr) {
    FS_RETURN_IF_ERROR(CheckDType(*edge_perm, DType::kI64, (o + ": edge_perm").c_str()));
    FS_RETURN_IF_ERROR(CheckShape(*edge_perm, {csr.num_edges()}, (o + ": edge_perm").c_str()));
    FS_RETURN_IF_ERROR(CheckContiguous(*edge_perm, (o + ": edge_perm").c_str()));
  }
  return CheckOnDevice(csr.device(), {&csr_t.indptr, edge_perm}, op);
}

Status CheckTableOffsetValues(const char* op, const int64_t* to, int64_t tables, int64_t rows) {
  if (to[0] < 0) return InvalidArgument(std::string(op) + ": table_offsets[0] is negative");
  for (int64_t t = 0; t < tables; ++t) {
    if (to[t + 1] < to[t]) {
      return InvalidArgument(std::string(op) + ": table_offsets must not decrease (table " + std::to_string(t) +
                             " ends before it starts)");
    }
  }
  if (to[tables] > rows) {
    return InvalidArgument(std::string(op) + ": table_offsets[" + std::to_string(tables) + "] = " +
                           std::to_string(to[tables]) + " exceeds the " + std::to_string(rows) + " rows of weights");
  }
  return Status::OK();
}

}  // namespace foresight::kernels::internal
