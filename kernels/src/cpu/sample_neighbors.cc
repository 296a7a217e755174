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
// after the whole pass, while the other threads go on sampling.
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

// One pass over fixed chunks of seeds. A chunk draws its neighbours into
// its own slot of the output buffer (ChunkSlots), so the chunks need not
// know each other's counts; the calling thread then takes the finished
// chunks in order, moving each down to its final place, or handing it to
// the sink, which writes that place itself (the relabelling reads global
// ids from the slot and writes local ids below them).
template <typename IdxT, typename SeedT, bool kMasked>
Status SampleImpl(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                  RngKey key, const uint8_t* mask, const SampleSink* sink, Tensor* out_indptr,
                  Tensor* out_neighbors) {
  const uint64_t num_nodes = static_cast<uint64_t>(graph.num_dst());
  const uint64_t num_src = static_cast<uint64_t>(graph.num_src);
  const int64_t num_seeds = seeds.size(0);
  const int64_t* indptr = graph.indptr.data<int64_t>();
  const IdxT* indices = graph.indices.data<IdxT>();
  const SeedT* seed_ids = seeds.data<SeedT>();

  const int64_t chunks = ThreadPool::NumChunks(num_seeds, kSeedGrain);
  const std::vector<int64_t> slot = ChunkSlots(ctx, graph, seed_ids, num_seeds, fanout);
  Tensor optr = Tensor::Empty({num_seeds + 1}, DType::kI64);
  int64_t* op = optr.data<int64_t>();
  op[0] = 0;
  Tensor nbrs = Tensor::Empty({slot[chunks]}, DType::kI64);
  int64_t* out = nbrs.data<int64_t>();

  std::vector<int64_t> chunk_total(chunks, 0);
  std::vector<int64_t> chunk_bad(chunks, -1);  // first bad seed position
  int64_t placed = 0;  // entries in their final place (calling thread only)
  // Runs on the calling thread, chunk by chunk in order, as soon as the
  // chunks before are done too (ordered_chunks.h). A chunk's indptr entries
  // are relative to its slot until then.
  OrderedChunks ordered(chunks, [&](int64_t c) {
    if (chunk_bad[c] >= 0) return BadSeedError<IdxT>(graph, seed_ids, chunk_bad[c]);
    const int64_t b = c * kSeedGrain, e = std::min(num_seeds, b + kSeedGrain), n = chunk_total[c];
    for (int64_t i = b; i < e; ++i) op[i + 1] += placed;
    Status status;
    if (n > 0 && sink != nullptr) {
      status = (*sink)(out + slot[c], out, placed, placed + n);
    } else if (n > 0) {
      std::memmove(out + placed, out + slot[c], static_cast<size_t>(n) * sizeof(int64_t));
    }
    placed += n;
    return status;
  });

  const FloydFns floyd = ChooseFloydFns();
  ctx.pool->ParallelForChunks(num_seeds, kSeedGrain, [&](int64_t c, int64_t b, int64_t e) {
    TakenSet taken;
    std::vector<IdxT> candidates;  // masked rows: the allowed neighbours, in CSR order
    int64_t* const chunk_out = out + slot[c];
    int64_t bad = -1;
    auto flag_bad = [&bad](int64_t i) { bad = bad < 0 || i < bad ? i : bad; };
    // Two stages kDrawAhead seeds apart. Stage A reads a seed's indptr
    // (prefetched kPrefetchSeeds seeds before), draws its positions into
    // its output slots and prefetches the neighbours they name (scattered
    // over the row: one cache miss each), or the whole row when every
    // neighbour is taken; stage B, kDrawAhead seeds later, replaces the
    // positions by the neighbour ids. The misses of several seeds are then
    // in flight at once instead of one draw's at a time. A masked row's
    // count needs the row itself, so stage A only prefetches it and stage B
    // counts and draws.
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
        FloydPositions(key, s, row.count, row.degree, &taken, dst, floyd);
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
            FloydDraw(key, static_cast<uint64_t>(seed_ids[i]), k, a, &taken, dst, floyd,
                      [cand](int64_t t) { return static_cast<int64_t>(cand[t]); });
          }
        }
      }
      pos += k;
      op[i + 1] = pos;
    }
    chunk_total[c] = pos;
    chunk_bad[c] = bad;
    ordered.Done(c);
  });
  FS_RETURN_IF_ERROR(ordered.Finish());

  *out_indptr = std::move(optr);
  *out_neighbors = nbrs.Slice(0, 0, placed);
  return Status::OK();
}

template <typename IdxT, typename SeedT>
Status DispatchMask(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                    RngKey key, const Tensor* source_mask, const SampleSink* sink, Tensor* out_indptr,
                    Tensor* out_neighbors) {
  if (source_mask != nullptr) {
    return SampleImpl<IdxT, SeedT, true>(ctx, graph, seeds, fanout, key, source_mask->data<uint8_t>(), sink,
                                         out_indptr, out_neighbors);
  }
  return SampleImpl<IdxT, SeedT, false>(ctx, graph, seeds, fanout, key, nullptr, sink, out_indptr,
                                        out_neighbors);
}

template <typename IdxT>
Status DispatchSeeds(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                     RngKey key, const Tensor* source_mask, const SampleSink* sink, Tensor* out_indptr,
                     Tensor* out_neighbors) {
  if (seeds.dtype() == DType::kI32) {
    return DispatchMask<IdxT, int32_t>(ctx, graph, seeds, fanout, key, source_mask, sink, out_indptr,
                                       out_neighbors);
  }
  return DispatchMask<IdxT, int64_t>(ctx, graph, seeds, fanout, key, source_mask, sink, out_indptr,
                                     out_neighbors);
}

}  // namespace

Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors, const Tensor* source_mask,
                       const SampleSink* sink) {
  if (graph.indices.dtype() == DType::kI32) {
    return DispatchSeeds<int32_t>(ctx, graph, seeds, fanout, key, source_mask, sink, out_indptr, out_neighbors);
  }
  return DispatchSeeds<int64_t>(ctx, graph, seeds, fanout, key, source_mask, sink, out_indptr, out_neighbors);
}

}  // namespace foresight::kernels::cpu
