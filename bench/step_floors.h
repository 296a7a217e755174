// In-step floors: the plainest loop that moves a phase's bytes in the
// phase's own access pattern, over the phase's own buffers and mappings,
// run at the phase's place in the replayed training step. A floor measured
// apart from the step (floors.h) sees warm caches, huge pages and no other
// traffic; the phase inside the step sees the dataset's 4 KiB-page mapping,
// rows evicted by the previous phases and cold optimizer state. Timing
// these loops where the kernel would run gives the rate the memory system
// offers that pattern there, so kernel time / floor time is the cost of
// the kernel's own work (random draws, relabelling, arithmetic, index
// bookkeeping) on top of the bytes it must move.
//
// Every loop runs on the pool in fixed chunks, prefetches ahead where its
// reads are random (addresses known early, as the kernels can arrange) and
// writes a checksum to a sink so that nothing is optimised away.
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/core/tensor.h"
#include "foresight/core/thread_pool.h"
#include "foresight/kernels/csr.h"
#include "foresight/sampler/neighbor_sampler.h"

namespace foresight::bench {

// The random reads one sampled batch makes, known before it is sampled
// (sampling is a pure function of the batch, so a prologue records them).
struct SamplingReads {
  std::vector<int64_t> rows;       // per destination of every hop: its node (reads indptr[v], indptr[v+1])
  std::vector<int64_t> positions;  // per read neighbour: its position in indices
  std::vector<int64_t> id_slots;   // per sampled edge: the id-table word its relabelling reads
  int64_t id_table_entries = 0;    // the batch's id table size (as the sampler sizes it)
  int id_entry_words = 1;          // int64 words per entry: 1 (32-bit node keys), 2 (64-bit)
  // Per hop, seeds outward: its destinations and its fanout (the chain
  // floor follows the reads hop by hop).
  std::vector<std::vector<int64_t>> frontiers;
  std::vector<int64_t> hop_fanouts;
};

// Records the reads of `batch` over `graph` with `fanouts` (seeds outward).
// A row with no more neighbours than the fanout is read whole; otherwise
// the positions are `fanout` uniform picks in the row (the cache lines a
// Floyd draw touches are distributed the same way; which ones is not part
// of the pattern).
SamplingReads RecordSamplingReads(const sampler::SampledBatch& batch, const kernels::Csr& graph,
                                  const std::vector<int64_t>& fanouts);

// Sampling's floor: the reads of `r` on the graph's own arrays and on an
// id table laid out as the sampler's (entries of r.id_entry_words int64
// words, an entry's home slot, no probing), with every read value written
// out (8 bytes per neighbour, as the sampled blocks are). `id_table` holds
// at least r.id_table_entries * r.id_entry_words words.
void SamplingFloor(ThreadPool* pool, const SamplingReads& r, const kernels::Csr& graph, const int64_t* id_table,
                   int64_t* scratch);

// Sampling's chain floor: the same reads in the order their addresses
// become known, as any sampler must make them. Hop by hop, over chunks of
// the hop's destinations in parallel: a destination's indptr entries
// (prefetched two steps ahead), then its neighbour positions (prefetched
// one step ahead, once its indptr is in), then, per chunk, the id-table
// slot of each neighbour read (prefetched ahead). No draws, no
// relabelling order, no bookkeeping: the rate the memory system gives the
// dependent pattern, where SamplingFloor gives the independent one.
void SamplingChainFloor(ThreadPool* pool, const SamplingReads& r, const kernels::Csr& graph,
                        const int64_t* id_table);

// Gather's floor: out[i] = table[ids[i]], one memcpy per row, with the
// rows a few ahead prefetched. `table` is [rows, F] f32, ids i64.
void GatherFloor(ThreadPool* pool, const Tensor& table, const Tensor& ids, Tensor* out);

// Aggregation's floor for one CSR: out[v] = the sum of x's rows at v's
// in-neighbours (no scaling, the next row prefetched), x [num_src, F].
void RowSumFloor(ThreadPool* pool, const kernels::Csr& csr, const Tensor& x, Tensor* out);

// The bytes a CSR transpose moves: reads the indices, writes two arrays of
// as many i64 (transposed indices and the edge permutation).
void TransposeFloor(ThreadPool* pool, const kernels::Csr& csr, int64_t* scratch_a, int64_t* scratch_b);

// Dropout's floors: forward out = 2 * in and mask = 1 (4 + 4 + 1 bytes per
// element); backward out = g * mask (4 + 1 + 4 bytes).
void DropoutForwardFloor(ThreadPool* pool, const Tensor& in, Tensor* out, Tensor* mask);
void DropoutBackwardFloor(ThreadPool* pool, const Tensor& mask, const Tensor& grad, Tensor* out);

// The optimizer's floor: per element read w, g, m, v and write w, m, v
// (28 bytes), one parallel loop over all parameters.
struct OptimizerState {
  std::vector<Tensor> m, v;  // one per parameter, shaped like it
};
void OptimizerFloor(ThreadPool* pool, const std::vector<Tensor>& weights, const std::vector<Tensor>& grads,
                    OptimizerState* state);

}  // namespace foresight::bench
