// Uniform neighbour sampling without replacement on the CPU.
//
// Each seed draws min(fanout, degree) distinct edge positions of its CSR row
// with Floyd's algorithm (floyd.h), O(fanout) per seed, never O(degree).
// Draws are keyed by (key, node id, draw index) only, so the sample of a
// node does not depend on its position in `seeds`, on the chunking or on
// the thread count.
//
// One pass over fixed chunks of seeds, with no per-seed allocation: each
// chunk draws into its own slot of the output buffer, sized by a bound on
// its draws, and the calling thread moves the finished chunks down to
// their final place in order. A separate counting pass (9% of sampling in
// the training step) would read every seed's indptr entry a second time
// and cost a second fork-join per hop. The reads of
// indptr and of the rows are random over the whole graph, so the pass
// works ahead of them: indptr a few seeds ahead, and a seed's positions
// (sixteen draws per vector Philox step: a draw's words do not depend on
// the earlier draws, and one Philox call's four words make two draws)
// drawn and their neighbours prefetched kDrawAhead seeds before they are
// read. The op then runs near the speed of those misses
// (a graph backed by huge pages halves them on machines where TLB misses
// dominate).
//
// With a sink (ops.h) the in-order step hands each chunk to it instead of
// moving it (ordered_chunks.h): the sampler's sequential relabelling then
// runs on the calling thread between the chunks it samples, instead of
// after the whole pass, while the other threads go on sampling. Threads
// that run out of this hop's chunks while the relabelling goes on can draw
// the next hop for these seeds (`ahead`), which the next call takes as
// its first chunks (`drawn`): in the sampler's first hop the other thread
// otherwise idled for a third of the hop.
//
// With a source mask the fill also counts each row's allowed neighbours c
// (one mask byte per edge; the mask of a graph that fits in memory is
// small enough to stay in cache) and runs Floyd over [0, c), mapping draw
// t to the t-th allowed neighbour through a per-chunk list of them. When
// all of a row's neighbours are allowed that list is the row, so an
// all-ones mask reproduces the unmasked bits. The masked variant is a
// separate instantiation: the unmasked loops are the same code as without
// this feature.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "foresight/kernels/ops.h"
#include "floyd.h"
#include "ordered_chunks.h"

namespace foresight::kernels::cpu {

namespace {

// Seeds per chunk: small enough to balance skewed degrees over the pool,
// large enough that the per-chunk scratch and scheduling are amortised.
constexpr int64_t kSeedGrain = 128;
// How many seeds ahead their indptr entries are prefetched.
constexpr int64_t kPrefetchSeeds = 8;
// How many seeds ahead of the fill the draws are made and their
// neighbours prefetched (see the fill pass).
constexpr int64_t kDrawAhead = 16;
// Seeds whose rows stage A has read and stage B has not yet filled: a
// power of two above kDrawAhead.
constexpr int64_t kRowRing = 32;
static_assert(kRowRing > kDrawAhead && (kRowRing & (kRowRing - 1)) == 0, "kRowRing: a power of two > kDrawAhead");
// Largest fanout whose chunks may get seeds x fanout output slots without a
// pass over the degrees (ChunkSlots).
constexpr int64_t kSlotFanout = 64;

inline int64_t SampleCount(int64_t fanout, int64_t degree) {
  return (fanout < 0 || fanout >= degree) ? degree : fanout;
}

// The error for seeds[i], which the fill found bad: out of range, a row
// whose indptr decreases, or (with a mask, which is indexed by them) an
// index out of range in its row.
template <typename IdxT, typename SeedT>
Status BadSeedError(const Csr& graph, const SeedT* seed_ids, int64_t i) {
  const int64_t* indptr = graph.indptr.data<int64_t>();
  const IdxT* indices = graph.indices.data<IdxT>();
  const int64_t s = static_cast<int64_t>(seed_ids[i]);
  if (s < 0 || s >= graph.num_dst()) {
    return OutOfRange("SampleNeighbors: seeds[" + std::to_string(i) + "] = " + std::to_string(s) +
                      " is out of range [0, " + std::to_string(graph.num_dst()) + ")");
  }
  if (indptr[s + 1] < indptr[s]) {
    return InvalidArgument("SampleNeighbors: graph.indptr decreases at row " + std::to_string(s) + " (indptr[" +
                           std::to_string(s) + "] = " + std::to_string(indptr[s]) + " > indptr[" +
                           std::to_string(s + 1) + "] = " + std::to_string(indptr[s + 1]) + ")");
  }
  for (int64_t pos = indptr[s]; pos < indptr[s + 1]; ++pos) {
    const int64_t u = static_cast<int64_t>(indices[pos]);
    if (u < 0 || u >= graph.num_src) {
      return OutOfRange("SampleNeighbors: graph.indices[" + std::to_string(pos) + "] = " + std::to_string(u) +
                        " (row " + std::to_string(s) + ") is out of range [0, " + std::to_string(graph.num_src) +
                        ")");
    }
  }
  return Internal("SampleNeighbors: seeds[" + std::to_string(i) + "] was flagged as bad but is valid");
}

// Where each chunk of seeds writes its neighbours: [slot[c], slot[c + 1])
// of the output buffer, at least as many entries as the chunk can draw.
// A chunk's seeds times the fanout bounds it; when that bound could be far
// above what the chunk draws (a fanout over kSlotFanout, -1 for every
// neighbour, or over twice the graph's mean degree) a pass over the seeds'
// degrees sizes each slot instead.
template <typename SeedT>
std::vector<int64_t> ChunkSlots(const ExecContext& ctx, const Csr& graph, const SeedT* seed_ids, int64_t num_seeds,
                                int64_t fanout) {
  const int64_t chunks = ThreadPool::NumChunks(num_seeds, kSeedGrain);
  std::vector<int64_t> slot(static_cast<size_t>(chunks + 1), 0);
  const int64_t mean_degree = graph.num_edges() / std::max<int64_t>(1, graph.num_dst());
  if (fanout >= 0 && fanout <= kSlotFanout && fanout <= 2 * mean_degree + 1) {
    for (int64_t c = 0; c < chunks; ++c) slot[c + 1] = std::min(num_seeds, (c + 1) * kSeedGrain) * fanout;
    return slot;
  }
  const int64_t* indptr = graph.indptr.data<int64_t>();
  const uint64_t num_nodes = static_cast<uint64_t>(graph.num_dst());
  ctx.pool->ParallelForChunks(num_seeds, kSeedGrain, [&](int64_t c, int64_t b, int64_t e) {
    int64_t bound = 0;
    for (int64_t i = b; i < e; ++i) {
      if (i + kPrefetchSeeds < e) {
        const uint64_t ahead = static_cast<uint64_t>(seed_ids[i + kPrefetchSeeds]);
        if (ahead < num_nodes) __builtin_prefetch(indptr + ahead);
      }
      const uint64_t s = static_cast<uint64_t>(seed_ids[i]);
      // Bad seeds count 0 here; the fill reports them.
      if (s < num_nodes) bound += std::max<int64_t>(0, SampleCount(fanout, indptr[s + 1] - indptr[s]));
    }
    slot[c + 1] = bound;
  });
  for (int64_t c = 0; c < chunks; ++c) slot[c + 1] += slot[c];
  return slot;
}

// One hop's draws for a range of seeds, chunk by chunk into slots.
template <typename SeedT>
struct DrawJob {
  const SeedT* seeds;      // the range's first seed
  int64_t num_seeds;
  int64_t fanout;
  RngKey key;
  int64_t* out;            // the slots' buffer
  const std::vector<int64_t>* slot;  // chunk c's slot starts at out + slot[c]
  int64_t* ends;           // [num_seeds]: each seed's end within its chunk's slot
  std::vector<int64_t>* total;       // per chunk: draws
  std::vector<int64_t>* bad;         // per chunk: first bad seed (position in `seeds`), or -1
};

// Chunk c of a job: seeds [b, e) of it. Two stages kDrawAhead seeds apart.
// Stage A reads a seed's indptr (prefetched kPrefetchSeeds seeds before),
// draws its positions into its output slots and prefetches the neighbours
// they name (scattered over the row: one cache miss each), or the whole
// row when every neighbour is taken; stage B, kDrawAhead seeds later,
// replaces the positions by the neighbour ids. The misses of several seeds
// are then in flight at once instead of one draw's at a time. A masked
// row's count needs the row itself, so stage A only prefetches it and
// stage B counts and draws.
template <typename IdxT, typename SeedT, bool kMasked>
void DrawChunk(const Csr& graph, const uint8_t* mask, const FloydFns* floyd, const DrawJob<SeedT>& job,
               int64_t c, int64_t b, int64_t e) {
  const uint64_t num_nodes = static_cast<uint64_t>(graph.num_dst());
  const uint64_t num_src = static_cast<uint64_t>(graph.num_src);
  const int64_t* indptr = graph.indptr.data<int64_t>();
  const IdxT* indices = graph.indices.data<IdxT>();
  TakenSet taken;
  std::vector<IdxT> candidates;  // masked rows: the allowed neighbours, in CSR order
  int64_t* const chunk_out = job.out + (*job.slot)[c];
  const SeedT* seed_ids = job.seeds;
  const int64_t fanout = job.fanout;
  const RngKey key = job.key;
  int64_t bad = -1;
  auto flag_bad = [&bad](int64_t i) { bad = bad < 0 || i < bad ? i : bad; };
  struct Row {
    int64_t begin, degree, count;
  };
  Row rows[kRowRing];
  int64_t ahead = b, ahead_pos = 0;
  auto stage_a = [&](int64_t i) {
    if (i + kPrefetchSeeds < e) {
      const uint64_t next = static_cast<uint64_t>(seed_ids[i + kPrefetchSeeds]);
      if (next < num_nodes) __builtin_prefetch(indptr + next);
    }
    Row& row = rows[i & (kRowRing - 1)];
    row = Row{0, 0, 0};
    const uint64_t s = static_cast<uint64_t>(seed_ids[i]);
    if (s >= num_nodes || indptr[s + 1] < indptr[s]) {
      flag_bad(i);
      return;
    }
    row.begin = indptr[s];
    row.degree = indptr[s + 1] - row.begin;
    const IdxT* nb = indices + row.begin;
    row.count = kMasked ? 0 : SampleCount(fanout, row.degree);
    if (kMasked || row.count == row.degree) {
      const char* line = reinterpret_cast<const char*>(nb);
      const char* end = reinterpret_cast<const char*>(nb + row.degree);
      for (int l = 0; line < end && l < 8; line += 64, ++l) __builtin_prefetch(line);
    } else {
      int64_t* dst = chunk_out + ahead_pos;
      FloydPositions(key, s, row.count, row.degree, &taken, dst, *floyd);
      for (int64_t j = 0; j < row.count; ++j) __builtin_prefetch(nb + dst[j]);
    }
    ahead_pos += row.count;
  };
  // The first seeds' indptr entries together: stage A prefetches only
  // kPrefetchSeeds ahead of itself, which would leave these misses one
  // after the other at the start of every chunk.
  for (int64_t i = b; i < e && i < b + kPrefetchSeeds; ++i) {
    const uint64_t s = static_cast<uint64_t>(seed_ids[i]);
    if (s < num_nodes) __builtin_prefetch(indptr + s);
  }
  for (; ahead < e && ahead < b + kDrawAhead; ++ahead) stage_a(ahead);
  int64_t pos = 0;
  for (int64_t i = b; i < e; ++i) {
    if (ahead < e) stage_a(ahead++);
    const Row& row = rows[i & (kRowRing - 1)];
    const IdxT* nb = indices + row.begin;
    int64_t* dst = chunk_out + pos;
    const int64_t d = row.degree;
    int64_t k = row.count;
    if (!kMasked) {
      if (k == d) {
        for (int64_t j = 0; j < d; ++j) dst[j] = static_cast<int64_t>(nb[j]);
      } else {
        for (int64_t j = 0; j < k; ++j) dst[j] = static_cast<int64_t>(nb[dst[j]]);
      }
    } else if (d > 0) {
      // The allowed neighbours, compacted branch-free (one slot past the
      // last allowed one is written); a row whose neighbours are all
      // allowed gives the unmasked draws, as cand[t] is then nb[t].
      if (static_cast<int64_t>(candidates.size()) < d + 1) candidates.resize(static_cast<size_t>(d + 1));
      IdxT* cand = candidates.data();
      int64_t a = 0;
      bool in_range = true;
      for (int64_t j = 0; j < d; ++j) {
        const IdxT u = nb[j];
        if (static_cast<uint64_t>(u) >= num_src) {
          in_range = false;
          break;
        }
        cand[a] = u;
        a += mask[static_cast<uint64_t>(u)] != 0;
      }
      if (!in_range) {
        flag_bad(i);
      } else {
        k = SampleCount(fanout, a);
        if (k == a) {
          for (int64_t j = 0; j < a; ++j) dst[j] = static_cast<int64_t>(cand[j]);
        } else {
          FloydDraw(key, static_cast<uint64_t>(seed_ids[i]), k, a, &taken, dst, *floyd,
                    [cand](int64_t t) { return static_cast<int64_t>(cand[t]); });
        }
      }
    }
    pos += k;
    job.ends[i] = pos;
  }
  (*job.total)[c] = pos;
  (*job.bad)[c] = bad;
}

// The seeds' draws: those made ahead for the first of them (`drawn`, whose
// chunks count as done from the start), then fixed chunks of the rest,
// each drawn into its own slot of the output buffer (ChunkSlots), so the
// chunks need not know each other's counts; the calling thread takes the
// chunks in order, moving each down to its final place, or handing it to
// the sink, which writes that place itself (the relabelling reads global
// ids from the slot and writes local ids below them). With `ahead` the
// same loop then draws the next hop for all the seeds.
template <typename IdxT, typename SeedT, bool kMasked>
Status SampleImpl(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                  RngKey key, const uint8_t* mask, const SampleSink* sink, const SampledAhead* drawn,
                  SampledAhead* ahead, Tensor* out_indptr, Tensor* out_neighbors) {
  const int64_t num_seeds = seeds.size(0);
  const SeedT* seed_ids = seeds.data<SeedT>();
  // Seeds [0, first) come drawn, in drawn_chunks chunks holding drawn_total.
  const int64_t first = drawn != nullptr ? drawn->num_seeds : 0;
  const int64_t drawn_chunks = ThreadPool::NumChunks(first, kSeedGrain);
  int64_t drawn_total = 0;
  for (int64_t c = 0; c < drawn_chunks; ++c) drawn_total += drawn->total[c];

  const int64_t chunks = ThreadPool::NumChunks(num_seeds - first, kSeedGrain);
  std::vector<int64_t> slot = ChunkSlots(ctx, graph, seed_ids + first, num_seeds - first, fanout);
  for (int64_t& at : slot) at += drawn_total;  // the drawn ones are moved in below them
  Tensor optr = Tensor::Empty({num_seeds + 1}, DType::kI64);
  int64_t* op = optr.data<int64_t>();
  op[0] = 0;
  Tensor nbrs = Tensor::Empty({slot[chunks]}, DType::kI64);
  int64_t* out = nbrs.data<int64_t>();
  std::vector<int64_t> chunk_total(chunks, 0), chunk_bad(chunks, -1);
  const DrawJob<SeedT> job{seed_ids + first, num_seeds - first, fanout, key, out, &slot, op + 1 + first,
                           &chunk_total, &chunk_bad};

  int64_t placed = 0;  // entries in their final place (calling thread only)
  // Runs on the calling thread, chunk by chunk in order, as soon as the
  // chunks before are done too (ordered_chunks.h). A chunk's indptr entries
  // are relative to its slot until then.
  OrderedChunks ordered(drawn_chunks + chunks, [&](int64_t c) {
    const bool was_drawn = c < drawn_chunks;
    const int64_t k = was_drawn ? c : c - drawn_chunks;  // the chunk in its own job
    const int64_t bad = was_drawn ? drawn->bad[k] : chunk_bad[k];
    if (bad >= 0) return BadSeedError<IdxT>(graph, seed_ids, (was_drawn ? 0 : first) + bad);
    const int64_t b = (was_drawn ? 0 : first) + k * kSeedGrain;
    const int64_t e = std::min(was_drawn ? first : num_seeds, b + kSeedGrain);
    const int64_t n = was_drawn ? drawn->total[k] : chunk_total[k];
    const int64_t* src = was_drawn ? drawn->neighbors.data<int64_t>() + drawn->slot[k] : out + slot[k];
    const int64_t* ends = was_drawn ? drawn->ends.data<int64_t>() : op + 1;
    for (int64_t i = b; i < e; ++i) op[i + 1] = ends[i] + placed;
    Status status;
    if (n > 0 && sink != nullptr) {
      status = (*sink)(src, out, placed, placed + n);
    } else if (n > 0) {
      std::memmove(out + placed, src, static_cast<size_t>(n) * sizeof(int64_t));
    }
    placed += n;
    return status;
  });
  for (int64_t c = 0; c < drawn_chunks; ++c) ordered.Ready(c);

  // The next hop's draws for all the seeds, into `ahead`.
  DrawJob<SeedT> next{};
  const int64_t ahead_chunks = ahead != nullptr ? ThreadPool::NumChunks(num_seeds, kSeedGrain) : 0;
  if (ahead != nullptr) {
    ahead->slot = ChunkSlots(ctx, graph, seed_ids, num_seeds, ahead->fanout);
    ahead->neighbors = Tensor::Empty({ahead->slot[ahead_chunks]}, DType::kI64);
    ahead->ends = Tensor::Empty({num_seeds}, DType::kI64);
    ahead->total.assign(static_cast<size_t>(ahead_chunks), 0);
    ahead->bad.assign(static_cast<size_t>(ahead_chunks), -1);
    next = DrawJob<SeedT>{seed_ids, num_seeds, ahead->fanout, ahead->key, ahead->neighbors.data<int64_t>(),
                          &ahead->slot, ahead->ends.data<int64_t>(), &ahead->total, &ahead->bad};
  }

  const FloydFns floyd = ChooseFloydFns();
  // This hop's chunks first: the pool hands chunks out in order, so the
  // next hop's are drawn by threads that have run out of this hop's.
  ctx.pool->ParallelForChunks(chunks + ahead_chunks, 1, [&](int64_t c, int64_t, int64_t) {
    const bool this_hop = c < chunks;
    const DrawJob<SeedT>& j = this_hop ? job : next;
    const int64_t k = this_hop ? c : c - chunks;
    const int64_t b = k * kSeedGrain;
    DrawChunk<IdxT, SeedT, kMasked>(graph, mask, &floyd, j, k, b, std::min(j.num_seeds, b + kSeedGrain));
    if (this_hop) ordered.Done(drawn_chunks + c);
  });
  FS_RETURN_IF_ERROR(ordered.Finish());
  if (ahead != nullptr) ahead->num_seeds = num_seeds;

  *out_indptr = std::move(optr);
  *out_neighbors = nbrs.Slice(0, 0, placed);
  return Status::OK();
}

template <typename IdxT, typename SeedT>
Status DispatchMask(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                    RngKey key, const Tensor* source_mask, const SampleSink* sink, const SampledAhead* drawn,
                    SampledAhead* ahead, Tensor* out_indptr, Tensor* out_neighbors) {
  if (source_mask != nullptr) {
    return SampleImpl<IdxT, SeedT, true>(ctx, graph, seeds, fanout, key, source_mask->data<uint8_t>(), sink,
                                         drawn, ahead, out_indptr, out_neighbors);
  }
  return SampleImpl<IdxT, SeedT, false>(ctx, graph, seeds, fanout, key, nullptr, sink, drawn, ahead, out_indptr,
                                        out_neighbors);
}

template <typename IdxT>
Status DispatchSeeds(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                     RngKey key, const Tensor* source_mask, const SampleSink* sink, const SampledAhead* drawn,
                     SampledAhead* ahead, Tensor* out_indptr, Tensor* out_neighbors) {
  if (seeds.dtype() == DType::kI32) {
    return DispatchMask<IdxT, int32_t>(ctx, graph, seeds, fanout, key, source_mask, sink, drawn, ahead,
                                       out_indptr, out_neighbors);
  }
  return DispatchMask<IdxT, int64_t>(ctx, graph, seeds, fanout, key, source_mask, sink, drawn, ahead,
                                     out_indptr, out_neighbors);
}

}  // namespace

Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors, const Tensor* source_mask,
                       const SampleSink* sink, const SampledAhead* drawn, SampledAhead* ahead) {
  if (graph.indices.dtype() == DType::kI32) {
    return DispatchSeeds<int32_t>(ctx, graph, seeds, fanout, key, source_mask, sink, drawn, ahead, out_indptr,
                                  out_neighbors);
  }
  return DispatchSeeds<int64_t>(ctx, graph, seeds, fanout, key, source_mask, sink, drawn, ahead, out_indptr,
                                out_neighbors);
}

}  // namespace foresight::kernels::cpu
