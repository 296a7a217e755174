// Layer-wise full-neighbour inference: the representation of every node is
// computed one layer at a time, in chunks of destination nodes whose blocks
// hold all their in-neighbours, so memory is bounded by two [N, hidden]
// arrays and one chunk's block, and the result is exact (no sampling, no
// dropout). Private to the trainer.
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/autograd/graph_block.h"
#include "foresight/core/context.h"
#include "foresight/core/tensor.h"
#include "foresight/sampler/neighbor_sampler.h"
#include "foresight/trainer/models.h"

namespace foresight::trainer::internal {

struct LayerwiseOutputs {
  std::vector<Tensor> logits;  // per output group: f32 [group rows, C]
  Tensor embeddings;           // f32 [N, D]: input of the last layer, when asked for
};

// Runs `model` (evaluation mode) over sampler.graph() (the whole graph by
// destination; the sampler builds the full-neighbour blocks) from `features` (f32/f16 [N, F]). The last layer computes only
// the rows of `output_groups` (i64 id lists, each chunked on its own, so a
// group's logits do not depend on the other groups), or all N as one group
// when the list is empty. Models that need the whole graph per layer (gcn)
// run each layer as one block over `whole_graph`, which the caller keeps
// across calls so its normalisation is built once. `whole_graph_per_layer` forces that mode for every model (a
// model trained on the full graph is then evaluated with the very same
// computation as in training).
Status LayerwiseInference(const ExecContext& ctx, GnnModel& model, sampler::NeighborSampler& sampler,
                          autograd::GraphBlock& whole_graph, const Tensor& features,
                          int64_t chunk_size, const std::vector<Tensor>& output_groups,
                          bool want_embeddings, bool whole_graph_per_layer, LayerwiseOutputs* out);

}  // namespace foresight::trainer::internal
