#include "layerwise_inference.h"

#include <algorithm>

#include "foresight/autograd/tape.h"
#include "foresight/kernels/ops.h"
#include "node_data.h"

namespace foresight::trainer::internal {

using autograd::GraphBlock;
using autograd::Tape;
using autograd::Var;

namespace {

// One layer over the whole graph as a single block (gcn).
StatusOr<Tensor> WholeGraphLayer(const ExecContext& ctx, GnnModel& model, int layer,
                                 GraphBlock& whole_graph, const Tensor& h) {
  FS_ASSIGN_OR_RETURN(Tensor x, FeaturesAsF32(ctx, h));
  Tape tape(ctx, /*training=*/false, /*record=*/false);
  FS_ASSIGN_OR_RETURN(Var y, model.ForwardLayer(tape, layer, whole_graph, Var(x)));
  return y.value();
}

// One layer for the destinations `dst_ids` (undefined: all nodes), chunk by
// chunk over full-neighbour blocks.
StatusOr<Tensor> ChunkedLayer(const ExecContext& ctx, GnnModel& model, int layer,
                              sampler::NeighborSampler& sampler, const Tensor& h, const Tensor& dst_ids,
                              int64_t chunk_size) {
  const int64_t n_dst = dst_ids.defined() ? dst_ids.numel() : sampler.graph().num_dst();
  const int64_t in_dim = model.LayerInputDim(layer);
  Tensor out = Tensor::Empty({n_dst, model.LayerOutputDim(layer)}, DType::kF32);
  for (int64_t begin = 0; begin < n_dst; begin += chunk_size) {
    const int64_t end = std::min(n_dst, begin + chunk_size);
    const Tensor ids = dst_ids.defined() ? dst_ids.Slice(0, begin, end) : IdRange(begin, end);
    kernels::Csr block_csr;
    Tensor src_nodes;
    FS_RETURN_IF_ERROR(sampler.FullNeighborBlock(ctx, ids, &block_csr, &src_nodes));
    Tensor x = Tensor::Empty({src_nodes.numel(), in_dim}, DType::kF32);
    FS_RETURN_IF_ERROR(kernels::GatherRows(ctx, h, src_nodes, &x));
    GraphBlock block(std::move(block_csr));
    Tape tape(ctx, /*training=*/false, /*record=*/false);
    FS_ASSIGN_OR_RETURN(Var y, model.ForwardLayer(tape, layer, block, Var(x)));
    Tensor rows = out.Slice(0, begin, end);
    FS_RETURN_IF_ERROR(rows.CopyFrom(y.value()));
  }
  return out;
}

}  // namespace

Status LayerwiseInference(const ExecContext& ctx, GnnModel& model, sampler::NeighborSampler& sampler,
                          GraphBlock& whole_graph, const Tensor& features, int64_t chunk_size,
                          const std::vector<Tensor>& output_groups, bool want_embeddings,
                          bool whole_graph_per_layer, LayerwiseOutputs* out) {
  if (chunk_size < 1) return InvalidArgument("layer-wise inference: chunk size must be >= 1");
  const kernels::Csr& graph = sampler.graph();
  if (features.size(0) != graph.num_dst()) {
    return InvalidArgument("layer-wise inference: " + std::to_string(features.size(0)) +
                           " feature rows for a graph of " + std::to_string(graph.num_dst()) + " nodes");
  }
  const int num_layers = model.num_layers();
  const bool whole = whole_graph_per_layer || model.NeedsWholeGraphPerLayer();
  *out = LayerwiseOutputs();
  if (want_embeddings && num_layers == 1) {
    FS_ASSIGN_OR_RETURN(out->embeddings, FeaturesAsF32(ctx, features));
  }
  Tensor h = features;
  for (int l = 0; l + 1 < num_layers; ++l) {
    if (whole) {
      FS_ASSIGN_OR_RETURN(h, WholeGraphLayer(ctx, model, l, whole_graph, h));
    } else {
      FS_ASSIGN_OR_RETURN(h, ChunkedLayer(ctx, model, l, sampler, h, Tensor(), chunk_size));
    }
  }
  if (want_embeddings && num_layers > 1) out->embeddings = h;

  const int last = num_layers - 1;
  if (whole) {
    FS_ASSIGN_OR_RETURN(Tensor all, WholeGraphLayer(ctx, model, last, whole_graph, h));
    if (output_groups.empty()) {
      out->logits.push_back(all);
      return Status::OK();
    }
    for (const Tensor& ids : output_groups) {
      Tensor rows = Tensor::Empty({ids.numel(), all.size(1)}, DType::kF32);
      FS_RETURN_IF_ERROR(kernels::GatherRows(ctx, all, ids, &rows));
      out->logits.push_back(rows);
    }
    return Status::OK();
  }
  if (output_groups.empty()) {
    FS_ASSIGN_OR_RETURN(Tensor all, ChunkedLayer(ctx, model, last, sampler, h, Tensor(), chunk_size));
    out->logits.push_back(all);
    return Status::OK();
  }
  for (const Tensor& ids : output_groups) {
    FS_ASSIGN_OR_RETURN(Tensor rows, ChunkedLayer(ctx, model, last, sampler, h, ids, chunk_size));
    out->logits.push_back(rows);
  }
  return Status::OK();
}

}  // namespace foresight::trainer::internal
