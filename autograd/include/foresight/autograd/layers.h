// The layers users compose models from. Each takes a Tape (which carries
// the execution context and training mode) and returns a Var.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "foresight/autograd/functional.h"
#include "foresight/autograd/graph_block.h"
#include "foresight/autograd/module.h"

namespace foresight::autograd {

// y = x W + b. W [in, out], Glorot init; b zero.
class Linear : public Module {
 public:
  Linear(const std::string& name, int64_t in, int64_t out, bool bias, RngKey init);
  StatusOr<Var> Forward(Tape& tape, const Var& x);
  // relu(x W + b) as one tape node: the same bits as Relu(Forward(x)), with
  // the bias, ReLU and their backward fused into one pass each.
  StatusOr<Var> ForwardRelu(Tape& tape, const Var& x);
  Parameter* weight() const { return weight_; }
  Parameter* bias() const { return bias_; }

 private:
  Parameter* weight_;
  Parameter* bias_ = nullptr;
};

// x through `layers` in turn, ReLU after each (after the last one too when
// relu_last), as one tape node: the same bits as ForwardRelu (and Forward
// for a last layer without ReLU) layer by layer. The backward takes each
// ReLU's mask and its layer's bias gradient on the tiles of the GEMM that
// produces that gradient (kernels::GemmReluBackward) instead of a pass of
// their own, and keeps no gradient for the hidden activations. For MLPs
// without dropout between their layers (DLRM's bottom and top MLPs).
StatusOr<Var> LinearReluChain(Tape& tape, const Var& x, const std::vector<Linear*>& layers, bool relu_last);

// GraphSAGE with mean aggregation (Hamilton et al.):
// h_v = x_v W_self + mean_{u in N(v)} x_u W_neigh + b. x has num_src rows;
// the result has num_dst rows.
class SAGEConv : public Module {
 public:
  SAGEConv(const std::string& name, int64_t in, int64_t out, RngKey init);
  StatusOr<Var> Forward(Tape& tape, GraphBlock& block, const Var& x);

 private:
  Linear* self_;
  Linear* neigh_;
};

// GCN (Kipf & Welling): h = D^-1/2 (A + I) D^-1/2 x W + b, self loops added
// only where missing.
class GCNConv : public Module {
 public:
  GCNConv(const std::string& name, int64_t in, int64_t out, RngKey init);
  StatusOr<Var> Forward(Tape& tape, GraphBlock& block, const Var& x);

 private:
  Linear* linear_;
};

// GAT (Velickovic et al.): `heads` attention heads of `out` features each,
// concatenated (concat=true, hidden layers) or averaged (output layer).
// attn_dropout is applied to the attention coefficients in training.
// Self loops are added where missing, as in the paper.
class GATConv : public Module {
 public:
  GATConv(const std::string& name, int64_t in, int64_t out, int heads, bool concat,
          float negative_slope, float attn_dropout, RngKey init);
  StatusOr<Var> Forward(Tape& tape, GraphBlock& block, const Var& x);
  int64_t out_features() const { return concat_ ? out_ * heads_ : out_; }

 private:
  int64_t out_;
  int heads_;
  bool concat_;
  float slope_;
  float attn_dropout_;
  Parameter* weight_;    // [in, heads * out]
  Parameter* attn_src_;  // [heads, out]
  Parameter* attn_dst_;  // [heads, out]
  Parameter* bias_;      // [out_features]
};

}  // namespace foresight::autograd
