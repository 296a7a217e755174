#include "foresight/autograd/layers.h"

#include "../internal.h"

namespace foresight::autograd {

GCNConv::GCNConv(const std::string& name, int64_t in, int64_t out, RngKey init) : Module(name) {
  // The child carries this layer's name, so parameters are "<name>.weight"
  // and "<name>.bias".
  linear_ = AddChild(std::make_unique<Linear>(name, in, out, true, init));
}

StatusOr<Var> GCNConv::Forward(Tape& tape, GraphBlock& block, const Var& x) {
  FS_RETURN_IF_ERROR(internal::CheckMatrix(x, "GCNConv " + name(), "input"));
  const Tensor& w = linear_->weight()->value();
  if (x.shape()[0] != block.num_src() || x.shape()[1] != w.size(0)) {
    return InvalidArgument("GCNConv " + name() + ": input " + ShapeToString(x.shape()) + " for a block with " +
                           std::to_string(block.num_src()) + " sources and weight " + ShapeToString(w.shape()));
  }
  FS_ASSIGN_OR_RETURN(GraphBlock * normalized, block.GcnNormalized(tape.ctx()));
  const Var& weight = linear_->weight()->var();
  const Var& bias = linear_->bias()->var();

  // A (x W) == (A x) W: multiply by W on the side with fewer columns to move.
  const int64_t in = w.size(0), out = w.size(1);
  const int64_t edges = normalized->csr().num_edges();
  const double transform_first = static_cast<double>(block.num_src()) * in * out + static_cast<double>(edges) * out;
  const double aggregate_first = static_cast<double>(edges) * in + static_cast<double>(block.num_dst()) * in * out;
  if (transform_first < aggregate_first) {
    FS_ASSIGN_OR_RETURN(Var h, MatMul(tape, x, weight));
    FS_ASSIGN_OR_RETURN(Var agg, Aggregate(tape, *normalized, kernels::Reduce::kSum, h));
    return AddBias(tape, agg, bias);
  }
  FS_ASSIGN_OR_RETURN(Var agg, Aggregate(tape, *normalized, kernels::Reduce::kSum, x));
  return internal::LinearOp(tape, agg, weight, bias, "GCNConv");
}

}  // namespace foresight::autograd
