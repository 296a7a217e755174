// Layer-wise full-neighbour inference: the representation of every needed
// node is computed one layer at a time, in chunks of destination nodes whose
// blocks hold all their in-neighbours, so the result is exact (no sampling,
// no dropout) and memory is bounded: node features are read chunk by chunk
// through a storage::RowStore (the next chunk's read in flight while the
// current one computes), and each hidden layer goes to a scratch RowStore,
// in RAM within InferenceMemory's budget, else in a buffered-I/O file.
// Private to the trainer.
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/autograd/graph_block.h"
#include "foresight/core/context.h"
#include "foresight/core/tensor.h"
#include "foresight/sampler/neighbor_sampler.h"
#include "foresight/storage/row_store.h"
#include "foresight/trainer/models.h"
#include "scratch_rows.h"

namespace foresight::trainer::internal {

// A chunk of `chunk_size` destinations is cut short where its destinations'
// in-degrees sum past kChunkSourcesPerDestination * chunk_size, so its
// sources (read into RAM, two chunks at a time) stay bounded on graphs with
// hubs, whose full neighbourhoods can be 100x a chunk. A destination whose
// own in-degree passes the bound is a chunk by itself.
constexpr int64_t kChunkSourcesPerDestination = 16;

// The most source rows one chunk can read: the bound above plus its
// destinations, or the largest in-degree + 1 when that is more (indptr:
// the graph's CSR by destination).
int64_t MaxChunkSources(const Tensor& indptr, int64_t chunk_size);

struct LayerwiseOutputs {
  std::vector<Tensor> logits;  // per output group: f32 [group rows, C]
  Tensor embeddings;           // f32 [N, D]: input of the last layer, when asked for
};

// Runs `model` (evaluation mode) over sampler.graph() (the whole graph by
// destination; the sampler builds the full-neighbour blocks) from
// `features` (f32/f16/bf16 rows, N of them, the model's input width).
//
// The last layer computes only the rows of `output_groups` (i64 id lists,
// each chunked on its own, so a group's logits do not depend on the other
// groups), or all N as one group when the list is empty; each hidden layer
// computes only the rows the layers above it read (the output ids and,
// layer by layer down, their in-neighbours). `want_embeddings` asks for the
// last hidden layer of every node (held in RAM whatever the budget: it is
// an output).
//
// gcn, whose normalisation uses each source's whole-graph out-degree, runs
// chunked too: each chunk's block carries the whole graph's weights
// (kernels::GcnNormalizeWithOutDegrees), so its rows equal the whole-graph
// computation's up to float rounding of the matrix products' order.
// `whole_graph_per_layer` instead runs each layer as one block over
// `whole_graph` (the caller keeps it across calls so its normalisation is
// built once), with every layer in RAM: a model trained on the full graph is
// then evaluated with the very same computation as in training.
//
// Results do not depend on the budget, the stores or the thread count. For
// sage and gat a row's bits depend only on its in-neighbourhood, so they
// equal the all-in-RAM computation's whatever rows are skipped; gcn's
// GCNConv picks its multiplication order per block, so its rows may differ
// in rounding when the chunks differ (other output groups, chunk size).
// `sampler` and `features` are used from this thread only.
Status LayerwiseInference(const ExecContext& ctx, GnnModel& model, sampler::NeighborSampler& sampler,
                          autograd::GraphBlock& whole_graph, storage::RowStore& features,
                          int64_t chunk_size, const std::vector<Tensor>& output_groups,
                          bool want_embeddings, bool whole_graph_per_layer, const InferenceMemory& memory,
                          LayerwiseOutputs* out);

// The same over an in-memory feature tensor (f32/f16/bf16 [N, F]), with the
// default InferenceMemory.
Status LayerwiseInference(const ExecContext& ctx, GnnModel& model, sampler::NeighborSampler& sampler,
                          autograd::GraphBlock& whole_graph, const Tensor& features,
                          int64_t chunk_size, const std::vector<Tensor>& output_groups,
                          bool want_embeddings, bool whole_graph_per_layer, LayerwiseOutputs* out);

}  // namespace foresight::trainer::internal
