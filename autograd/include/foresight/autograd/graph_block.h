// GraphBlock: one message-passing layer's bipartite graph (a kernels::Csr
// whose first num_dst sources are the destinations) plus structures derived
// from it once and reused by forward and backward: the transpose with its
// edge permutation, and the GCN-normalised copy. A full graph is a block with
// num_src == num_dst.
#pragma once

#include <memory>
#include <optional>

#include "foresight/core/context.h"
#include "foresight/kernels/csr.h"

namespace foresight::autograd {

class GraphBlock {
 public:
  GraphBlock() = default;
  explicit GraphBlock(kernels::Csr csr) : csr_(std::move(csr)) {}
  // A block whose GCN-normalised form is given (GcnNormalized returns it)
  // rather than derived from `csr`: a chunk of a larger graph carries that
  // graph's normalisation weights, which the chunk's own degrees cannot give
  // (layer-wise inference; see kernels::GcnNormalizeWithOutDegrees).
  GraphBlock(kernels::Csr csr, kernels::Csr gcn_normalized);

  const kernels::Csr& csr() const { return csr_; }
  // Optional global ids of the sources (i64 [>= num_src]; a sampled batch's
  // input nodes, whose prefixes are every layer's sources). Dropout keys its
  // masks by them (Dropout with row ids, GATConv's edges), so ranks that
  // hold parts of a batch draw the one-rank masks. Undefined: by position.
  const Tensor& src_ids() const { return src_ids_; }
  void set_src_ids(Tensor ids) { src_ids_ = std::move(ids); }
  // src_ids' first n (its sources, or the layer input's rows), or undefined.
  Tensor SourceIds(int64_t n) const;
  int64_t num_dst() const { return csr_.num_dst(); }
  int64_t num_src() const { return csr_.num_src; }

  // Built on first call, cached afterwards. Not thread-safe.
  struct Transposed {
    kernels::Csr csr;
    Tensor edge_perm;
  };
  StatusOr<const Transposed*> Transpose(const ExecContext& ctx);
  // The GCN-normalised block (self loops added where missing) as a block of
  // its own, so its transpose is cached too.
  StatusOr<GraphBlock*> GcnNormalized(const ExecContext& ctx);

 private:
  kernels::Csr csr_;
  Tensor src_ids_;
  std::unique_ptr<Transposed> transposed_;
  std::unique_ptr<GraphBlock> gcn_;
};

}  // namespace foresight::autograd
