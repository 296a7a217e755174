// Mini-batch neighbour sampling for GNN training: from a batch of seed
// nodes, samples `fanouts[h]` in-neighbours per node at hop h and returns
// one block (a kernels::Csr with local ids) per layer, plus the global ids
// of the nodes whose features the first layer reads. Every draw is keyed by
// (seed, epoch, batch, hop, node, draw), so a batch is a pure function of
// those and of the graph: identical for any thread count, and resumable.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/page_shadow.h"
#include "foresight/core/rng.h"
#include "foresight/core/tensor.h"
#include "foresight/kernels/csr.h"

namespace foresight::kernels {
struct SampledAhead;  // foresight/kernels/ops.h
}  // namespace foresight::kernels

namespace foresight::sampler {

namespace internal {
class LocalIdMap;
}  // namespace internal

// The sampled computation graph of one batch, in layer order. With L layers,
// blocks[0] consumes input_nodes (its sources) and blocks[L-1] produces the
// seeds (its destinations). In every block the first num_dst sources are
// its destinations, in order, and block l's destinations are block l+1's
// sources: blocks[l].num_dst() == blocks[l+1].num_src. Block indices are i64
// local ids, shared by all blocks: local id i is input_nodes[i] in every
// block (a block's sources are a prefix of input_nodes). All tensors are
// host tensors owned by the batch.
struct SampledBatch {
  Tensor seeds;        // i64 [B]: global ids of the batch's seed nodes
  Tensor input_nodes;  // i64 [n_in]: global ids of blocks[0]'s sources (distinct,
                       // starting with the seeds): the rows to gather features for
  std::vector<kernels::Csr> blocks;
  int64_t sampled_edges = 0;  // total edges over all blocks
};

// The geometry of a sampler's id table (a batch's global -> local id map),
// for the memory plan and the benchmarks that must match it. Entries for a
// batch reaching `batch_nodes` nodes: a power of two, at least 4096 and four
// times the nodes (the table stays at most a quarter full).
int64_t IdTableEntries(int64_t batch_nodes);
// Bytes per entry on a graph of `num_nodes` nodes: 8 (32-bit node ids), or
// 16 from 2^31 nodes on.
int64_t IdTableEntryBytes(int64_t num_nodes);

// Samples multi-hop blocks from an in-memory CSR-by-destination graph (row v
// lists v's in-neighbours as global ids, i32 or i64; num_src == num_dst).
//
// Memory: a dense global -> local id array of 4 bytes per graph node,
// allocated on first use and reused by every batch (only the entries a
// batch touched are reset), so relabelling costs one array access per
// sampled edge, never a hash lookup.
//
// Thread safety: Sample and FullNeighborBlock mutate that scratch array, so
// one NeighborSampler must not be used from two threads at once (use one
// per sampling stage; they run their parallel loops on ctx.pool). Results
// do not depend on ctx.pool's thread count.
class NeighborSampler {
 public:
  // `fanouts` is listed from the seeds outward (PyG order): fanouts[0] is
  // the number of neighbours drawn per seed; -1 takes all neighbours.
  // Arguments are checked by Sample (which returns the error).
  NeighborSampler(kernels::Csr graph, std::vector<int64_t> fanouts, uint64_t seed);
  ~NeighborSampler();
  NeighborSampler(NeighborSampler&&) noexcept;
  NeighborSampler& operator=(NeighborSampler&&) noexcept;
  NeighborSampler(const NeighborSampler&) = delete;
  NeighborSampler& operator=(const NeighborSampler&) = delete;

  // Samples the blocks of batch `batch` of epoch `epoch` for `seeds` (i32 or
  // i64, 1-D, distinct, host). Hop h draws with HopKey(seed, epoch, batch, h).
  // Errors: a seed out of range or repeated (naming its position), an
  // invalid fanout, a graph that is not square or not on the CPU.
  //
  // `source_mask` (optional, u8 [num nodes], host; see ResidentMask)
  // restricts every hop to sources whose mask byte is nonzero (resident
  // sampling): kernels::SampleNeighbors draws from the allowed in-neighbours
  // only, with the same keys, so an all-ones mask changes nothing. The
  // seeds must be allowed themselves (an error names the first that is
  // not), so every node of the batch is.
  Status Sample(const ExecContext& ctx, const Tensor& seeds, int64_t epoch, int64_t batch,
                SampledBatch* out, const Tensor* source_mask = nullptr);

  // All in-neighbours of `dst_nodes` (i32/i64, distinct) as one block whose
  // first num_dst sources are dst_nodes; `src_nodes` (i64) receives the
  // block's sources as global ids. For layer-wise full-neighbour inference.
  Status FullNeighborBlock(const ExecContext& ctx, const Tensor& dst_nodes, kernels::Csr* block,
                           Tensor* src_nodes);

  // Paged topology: from now on Sample and FullNeighborBlock read the
  // graph's indptr and indices by page: before each hop they pread the 4
  // KiB pages their frontier's rows lie on (indptr at v and v+1, then the
  // rows' in-neighbour lists) into anonymous "shadows" of the two arrays,
  // and when they return they free those pages. The topology's share of
  // the resident set is then exactly the pages one call loads, whatever
  // the page cache's folio size (a fault on the file mapping itself maps
  // a whole folio, up to 2 MiB on recent kernels). Samples are unchanged.
  // FailedPrecondition unless both arrays are read-only file mappings (a
  // dataset's mmap'd .npy files). With `guard` (or the environment's
  // FORESIGHT_TOPOLOGY_GUARD=1) the pages not loaded are PROT_NONE, so a
  // read of the graph outside the loaded rows crashes instead of reading
  // zeros: a debug mode for tests.
  //
  // graph() still returns the file-mapped CSR: readers other than this
  // sampler's calls (degree counts, chunking) read the file's bytes.
  Status PageTopology(bool guard = false);
  bool paged_topology() const { return indptr_pages_ != nullptr; }
  // Topology pages (both arrays) held now (0 between calls), and the most
  // held during the last Sample or FullNeighborBlock.
  int64_t topology_pages_loaded() const;
  int64_t last_call_topology_pages() const { return last_call_pages_; }

  // RngKey::FromSeed(seed).Fold(kSampling).Fold(epoch).Fold(batch).Fold(hop).
  static RngKey HopKey(uint64_t seed, int64_t epoch, int64_t batch, int64_t hop);

  const kernels::Csr& graph() const { return graph_; }
  const std::vector<int64_t>& fanouts() const { return fanouts_; }
  int num_layers() const { return static_cast<int>(fanouts_.size()); }

 private:
  Status CheckGraph() const;
  // The mask's dtype and shape: one byte per graph node.
  Status CheckSourceMask(const Tensor& source_mask) const;
  // Every seed (the map's nodes so far) allowed by a checked mask.
  Status CheckSeedsResident(const Tensor& source_mask) const;
  // Samples one hop from the map's nodes so far and relabels the result
  // into a block (the map grows by the new sources). With `seeds` the hop
  // starts the batch from an empty map: it samples the seeds as given, and
  // they enter the map (as local ids 0..n-1, validated) on this thread
  // just before the first relabelling, while the other threads already
  // draw, or after the op when nothing was drawn. `drawn` and `ahead` as
  // kernels::SampleNeighbors takes them: this hop's draws made during the
  // hop before, and the next hop's to make during this one.
  // Paged: loads the pages of `frontier`'s rows (ids outside the graph are
  // left to the checks that report them).
  Status LoadRows(const ExecContext& ctx, const Tensor& frontier);
  // Gives back every loaded page (when a call returns), recording its peak.
  void ReleaseTopology();
  Status SampleHop(const ExecContext& ctx, int64_t fanout, RngKey key, const Tensor* source_mask,
                   const Tensor* seeds, const kernels::SampledAhead* drawn, kernels::SampledAhead* ahead,
                   kernels::Csr* block);

  kernels::Csr graph_;
  std::vector<int64_t> fanouts_;
  uint64_t seed_;
  std::unique_ptr<internal::LocalIdMap> map_;
  // Paged topology: the shadows and the CSR over them, which the kernels
  // read.
  std::unique_ptr<PageShadow> indptr_pages_;
  std::unique_ptr<PageShadow> indices_pages_;
  kernels::Csr paged_graph_;
  int64_t last_call_pages_ = 0;
};

}  // namespace foresight::sampler
