// Linear layers in a row with a ReLU between them, as one tape node. Layer
// by layer, each ReLU's backward was a pass of its own (ReluBackwardSumRows:
// read the gradient and the activation, write the masked gradient, from L3
// at the DLRM step's 2048 x 512 activations) after the GEMM above it had
// written that gradient. Holding the whole chain in one node, the backward
// takes each mask, and its layer's bias gradient, on the tiles of the GEMM
// that produces the gradient (kernels::GemmReluBackward), and the hidden
// activations get no gradient tensors of their own.
#include "foresight/autograd/layers.h"

#include <string>
#include <vector>

#include "../internal.h"

namespace foresight::autograd {

using internal::AccumulateWith;
using internal::EmptyF32;
using internal::LinearBranchBackward;
using internal::LinearWeightGrad;

namespace {

// The gradient of the bias b of a layer, produced by kernel(Tensor* gb), or
// kernel(nullptr) when b takes none.
template <typename Kernel>
Status WithBiasGrad(const ExecContext& ctx, const Var& b, Kernel&& kernel) {
  if (!b.requires_grad()) return kernel(nullptr);
  return AccumulateWith(ctx, b, [&](Tensor* gb) { return kernel(gb); });
}

}  // namespace

StatusOr<Var> LinearReluChain(Tape& tape, const Var& x, const std::vector<Linear*>& layers, bool relu_last) {
  if (layers.empty()) return InvalidArgument("LinearReluChain: no layers");
  std::vector<Var> inputs{x};
  std::vector<Var> ws, bs;
  std::vector<Tensor> outs;  // each layer's output (after its ReLU)
  for (size_t l = 0; l < layers.size(); ++l) {
    const Linear& layer = *layers[l];
    const std::string op = "LinearReluChain: " + (layer.name().empty() ? "layer " + std::to_string(l) : layer.name());
    const Var w = layer.weight()->var();
    const Var b = layer.bias() != nullptr ? layer.bias()->var() : Var();
    const Var in = l == 0 ? x : Var(outs.back());
    FS_RETURN_IF_ERROR(internal::CheckLinear(in, w, b, op.c_str()));
    if (w.shape()[0] <= 0 || w.shape()[1] <= 0) {
      return InvalidArgument(op + ": in and out features must be positive, got weight " + ShapeToString(w.shape()));
    }
    const bool relu = relu_last || l + 1 < layers.size();
    FS_ASSIGN_OR_RETURN(Tensor y, internal::LinearValue(tape.ctx(), in.value(), w.value(), b, relu));
    outs.push_back(y);
    ws.push_back(w);
    bs.push_back(b);
    inputs.push_back(w);
    if (b.defined()) inputs.push_back(b);
  }
  return tape.RecordGrad(inputs, outs.back(), [x, ws, bs, outs, relu_last](const ExecContext& ctx,
                                                                         const Tensor& gy) -> Status {
    const size_t last = ws.size() - 1;
    // gz: the gradient at layer l's pre-activation, from the top down.
    Tensor gz = gy;
    if (relu_last) {
      FS_ASSIGN_OR_RETURN(gz, EmptyF32(gy.device(), gy.shape()));
      FS_RETURN_IF_ERROR(WithBiasGrad(ctx, bs[last], [&](Tensor* gb) {
        return kernels::ReluBackwardSumRows(ctx, outs[last], gy, &gz, gb);
      }));
    } else if (bs[last].requires_grad()) {
      FS_RETURN_IF_ERROR(AccumulateWith(ctx, bs[last], [&](Tensor* gb) { return kernels::SumRows(ctx, gy, gb); }));
    }
    for (size_t l = last; l > 0; --l) {
      const Tensor& in = outs[l - 1];
      FS_RETURN_IF_ERROR(LinearWeightGrad(ctx, in, ws[l], gz));
      // The layer below's pre-activation gradient, masked (and its bias
      // gradient summed) on the tiles of dZ W^T.
      FS_ASSIGN_OR_RETURN(Tensor below, EmptyF32(in.device(), in.shape()));
      FS_RETURN_IF_ERROR(WithBiasGrad(ctx, bs[l - 1], [&](Tensor* gb) {
        return kernels::GemmReluBackward(ctx, gz, ws[l].value(), in, &below, gb);
      }));
      gz = below;
    }
    // The first layer's input is a Var of its own: dX and dW as Linear's.
    return LinearBranchBackward(ctx, x, ws[0], gz);
  });
}

}  // namespace foresight::autograd
