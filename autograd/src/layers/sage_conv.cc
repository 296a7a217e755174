#include "foresight/autograd/layers.h"

#include "../internal.h"

namespace foresight::autograd {

SAGEConv::SAGEConv(const std::string& name, int64_t in, int64_t out, RngKey init) : Module(name) {
  // One bias, on the self branch: the neighbour branch then commutes with
  // the mean, which lets Forward choose the cheaper order.
  self_ = AddChild(std::make_unique<Linear>(internal::JoinName(name, "self"), in, out, true, init.Fold(0)));
  neigh_ = AddChild(std::make_unique<Linear>(internal::JoinName(name, "neigh"), in, out, false, init.Fold(1)));
}

StatusOr<Var> SAGEConv::Forward(Tape& tape, GraphBlock& block, const Var& x) {
  FS_RETURN_IF_ERROR(internal::CheckMatrix(x, "SAGEConv " + name(), "input"));
  const int64_t num_src = block.num_src(), num_dst = block.num_dst();
  if (x.shape()[0] != num_src || num_dst > num_src) {
    return InvalidArgument("SAGEConv " + name() + ": input " + ShapeToString(x.shape()) + " for a block with " +
                           std::to_string(num_src) + " sources and " + std::to_string(num_dst) +
                           " destinations (need one row per source, destinations first)");
  }
  FS_ASSIGN_OR_RETURN(Var x_dst, SliceRows(tape, x, 0, num_dst));

  // mean(x) W == mean(x W): transform first when that is less work.
  const int64_t in = neigh_->weight()->value().size(0), out = neigh_->weight()->value().size(1);
  const int64_t edges = block.csr().num_edges();
  const double transform_first = static_cast<double>(num_src) * in * out + static_cast<double>(edges) * out;
  const double aggregate_first = static_cast<double>(edges) * in + static_cast<double>(num_dst) * in * out;
  if (transform_first < aggregate_first) {
    FS_ASSIGN_OR_RETURN(Var h_self, self_->Forward(tape, x_dst));
    FS_ASSIGN_OR_RETURN(Var hx, neigh_->Forward(tape, x));
    FS_ASSIGN_OR_RETURN(Var h_neigh, Aggregate(tape, block, kernels::Reduce::kMean, hx));
    return Add(tape, h_self, h_neigh);
  }
  // Both products in one node (the same bits as Add of the two Linears).
  FS_ASSIGN_OR_RETURN(Var agg, Aggregate(tape, block, kernels::Reduce::kMean, x));
  return internal::LinearPairOp(tape, x_dst, self_->weight()->var(), self_->bias()->var(), agg,
                                neigh_->weight()->var(), "SAGEConv");
}

}  // namespace foresight::autograd
