#include "step_floors.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

namespace foresight::bench {
namespace {

volatile uint64_t g_sink;  // keeps the floor loops observable

// How many random reads ahead the floors prefetch (enough misses in flight
// to saturate a core's fill buffers).
constexpr int64_t kAhead = 16;
constexpr int64_t kGrain = 4096;
// Rows ahead the gather floor prefetches (each row is several lines).
constexpr int64_t kRowsAhead = 12;
// Elements per optimizer chunk, as Adam::Step cuts them.
constexpr int64_t kOptimizerGrain = 1 << 15;

// A uniform position in [0, n) from (v, j): a multiplicative hash reduced
// by a multiply-shift, as cheap as the floor must be.
inline int64_t Pick(int64_t v, int64_t j, int64_t n) {
  const uint64_t h = (static_cast<uint64_t>(v) * 0x9E3779B97F4A7C15ull) ^ (static_cast<uint64_t>(j) * 0xC2B2AE3D27D4EB4Full);
  return static_cast<int64_t>((static_cast<unsigned __int128>(h) * static_cast<uint64_t>(n)) >> 64);
}

// The int64 word of the sampler's id table that node v's home entry
// starts at (entries of `words` int64 words; home = top `64 - shift` bits
// of v times the golden ratio, as sampler/src/local_id_map.h hashes).
inline int64_t IdSlot(int64_t v, int shift, int words) {
  return words * static_cast<int64_t>((static_cast<uint64_t>(v) * 0x9E3779B97F4A7C15ull) >> shift);
}

// dst[i] = src[where[i]] for i in [0, n), reads prefetched kAhead ahead.
template <typename T>
void RandomReads(ThreadPool* pool, const T* src, const int64_t* where, int64_t n, int64_t* dst) {
  pool->ParallelFor(n, kGrain, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      if (i + kAhead < e) __builtin_prefetch(src + where[i + kAhead]);
      dst[i] = static_cast<int64_t>(src[where[i]]);
    }
  });
}

template <typename I>
void RowSum(ThreadPool* pool, const kernels::Csr& csr, const float* x, int64_t f, float* out) {
  const int64_t* ip = csr.indptr.data<int64_t>();
  const I* idx = csr.indices.data<I>();
  pool->ParallelFor(csr.num_dst(), 64, [&](int64_t v0, int64_t v1) {
    for (int64_t v = v0; v < v1; ++v) {
      float* __restrict o = out + v * f;
      std::fill(o, o + f, 0.0f);
      for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
        if (e + 1 < ip[v1]) __builtin_prefetch(x + static_cast<int64_t>(idx[e + 1]) * f);
        const float* __restrict r = x + static_cast<int64_t>(idx[e]) * f;
        for (int64_t j = 0; j < f; ++j) o[j] += r[j];
      }
    }
  });
}

}  // namespace

SamplingReads RecordSamplingReads(const sampler::SampledBatch& b, const kernels::Csr& graph,
                                  const std::vector<int64_t>& fanouts) {
  SamplingReads r;
  const int64_t* ip = graph.indptr.data<int64_t>();
  const int64_t* in = b.input_nodes.data<int64_t>();
  for (size_t h = 0; h < fanouts.size(); ++h) {
    // Hop h samples for blocks[L-1-h]; its destinations are the first
    // num_dst input nodes, and its sources are local ids into input_nodes.
    const kernels::Csr& blk = b.blocks[b.blocks.size() - 1 - h];
    r.frontiers.emplace_back(in, in + blk.num_dst());
    r.hop_fanouts.push_back(fanouts[h]);
    for (int64_t i = 0; i < blk.num_dst(); ++i) {
      const int64_t v = in[i], s = ip[v], d = ip[v + 1] - s;
      r.rows.push_back(v);
      const int64_t k = fanouts[h] < 0 ? d : std::min(fanouts[h], d);
      for (int64_t j = 0; j < k; ++j) r.positions.push_back(k == d ? s + j : s + Pick(v, j, d));
    }
  }
  // The sampler's id table, as it sizes it; node v's home entry is the top
  // bits of v times the golden ratio.
  r.id_table_entries = sampler::IdTableEntries(b.input_nodes.numel());
  r.id_entry_words = static_cast<int>(sampler::IdTableEntryBytes(graph.num_dst()) / 8);
  const int log = __builtin_ctzll(static_cast<unsigned long long>(r.id_table_entries));
  for (size_t h = 0; h < fanouts.size(); ++h) {
    const kernels::Csr& blk = b.blocks[b.blocks.size() - 1 - h];
    const int64_t* local = blk.indices.data<int64_t>();
    for (int64_t e = 0; e < blk.num_edges(); ++e) {
      const uint64_t v = static_cast<uint64_t>(in[local[e]]);
      r.id_slots.push_back(IdSlot(static_cast<int64_t>(v), 64 - log, r.id_entry_words));
    }
  }
  return r;
}

void SamplingFloor(ThreadPool* pool, const SamplingReads& r, const kernels::Csr& graph, const int64_t* id_table,
                   int64_t* scratch) {
  const int64_t* ip = graph.indptr.data<int64_t>();
  const int64_t nr = static_cast<int64_t>(r.rows.size());
  pool->ParallelFor(nr, kGrain, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      if (i + kAhead < e) __builtin_prefetch(ip + r.rows[i + kAhead]);
      scratch[i] = ip[r.rows[i] + 1] - ip[r.rows[i]];
    }
  });
  const int64_t np = static_cast<int64_t>(r.positions.size());
  if (graph.indices.dtype() == DType::kI32) {
    RandomReads(pool, graph.indices.data<int32_t>(), r.positions.data(), np, scratch);
  } else {
    RandomReads(pool, graph.indices.data<int64_t>(), r.positions.data(), np, scratch);
  }
  RandomReads(pool, id_table, r.id_slots.data(), static_cast<int64_t>(r.id_slots.size()), scratch + np);
  g_sink = static_cast<uint64_t>(scratch[0]);
}

namespace {

// One chunk of a hop for the chain floor: neighbours read into `nb`, then
// their id slots read; returns a checksum.
template <typename I>
uint64_t ChainChunk(const int64_t* ip, const I* idx, const int64_t* frontier, int64_t b, int64_t e, int64_t fanout,
                    const int64_t* id_table, int shift, int words, std::vector<int64_t>* nb) {
  constexpr int64_t kStep = 8;  // destinations per pipeline step
  nb->clear();
  auto count = [&](int64_t v, int64_t* s) {
    *s = ip[v];
    const int64_t d = ip[v + 1] - *s;
    return std::pair<int64_t, int64_t>(d, fanout < 0 || fanout >= d ? d : fanout);
  };
  for (int64_t i = b; i < e; ++i) {
    if (i + 2 * kStep < e) __builtin_prefetch(ip + frontier[i + 2 * kStep]);
    if (i + kStep < e) {
      const int64_t v = frontier[i + kStep];
      int64_t s;
      const auto [d, k] = count(v, &s);
      for (int64_t j = 0; j < k; ++j) __builtin_prefetch(idx + (k == d ? s + j : s + Pick(v, j, d)));
    }
    const int64_t v = frontier[i];
    int64_t s;
    const auto [d, k] = count(v, &s);
    for (int64_t j = 0; j < k; ++j) nb->push_back(static_cast<int64_t>(idx[k == d ? s + j : s + Pick(v, j, d)]));
  }
  uint64_t sum = 0;
  const int64_t n = static_cast<int64_t>(nb->size());
  const int64_t* u = nb->data();
  for (int64_t j = 0; j < n; ++j) {
    if (j + kAhead < n) __builtin_prefetch(id_table + IdSlot(u[j + kAhead], shift, words));
    sum += static_cast<uint64_t>(id_table[IdSlot(u[j], shift, words)]);
  }
  return sum;
}

}  // namespace

void SamplingChainFloor(ThreadPool* pool, const SamplingReads& r, const kernels::Csr& graph,
                        const int64_t* id_table) {
  const int64_t* ip = graph.indptr.data<int64_t>();
  const int shift = 64 - __builtin_ctzll(static_cast<unsigned long long>(r.id_table_entries));
  std::atomic<uint64_t> sum{0};
  for (size_t h = 0; h < r.frontiers.size(); ++h) {
    const std::vector<int64_t>& f = r.frontiers[h];
    // Chunks of 128 destinations, as the sampler cuts a hop.
    pool->ParallelFor(static_cast<int64_t>(f.size()), 128, [&](int64_t b, int64_t e) {
      thread_local std::vector<int64_t> nb;
      const uint64_t s = graph.indices.dtype() == DType::kI32
                             ? ChainChunk(ip, graph.indices.data<int32_t>(), f.data(), b, e, r.hop_fanouts[h],
                                          id_table, shift, r.id_entry_words, &nb)
                             : ChainChunk(ip, graph.indices.data<int64_t>(), f.data(), b, e, r.hop_fanouts[h],
                                          id_table, shift, r.id_entry_words, &nb);
      sum.fetch_add(s, std::memory_order_relaxed);
    });
  }
  g_sink = sum.load();
}

void GatherFloor(ThreadPool* pool, const Tensor& table, const Tensor& ids, Tensor* out) {
  const size_t rb = static_cast<size_t>(table.size(1)) * sizeof(float);
  const char* src = static_cast<const char*>(table.raw_data());
  char* dst = static_cast<char*>(out->raw_data());
  const int64_t* id = ids.data<int64_t>();
  const int64_t n = ids.numel();
  pool->ParallelFor(n, 256, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      if (i + kRowsAhead < e) {
        const char* ahead = src + id[i + kRowsAhead] * static_cast<int64_t>(rb);
        for (size_t l = 0; l < rb; l += 64) __builtin_prefetch(ahead + l);
      }
      std::memcpy(dst + i * static_cast<int64_t>(rb), src + id[i] * static_cast<int64_t>(rb), rb);
    }
  });
  g_sink = static_cast<uint64_t>(dst[0]);
}

void RowSumFloor(ThreadPool* pool, const kernels::Csr& csr, const Tensor& x, Tensor* out) {
  if (csr.indices.dtype() == DType::kI32) {
    RowSum<int32_t>(pool, csr, x.data<float>(), x.size(1), out->data<float>());
  } else {
    RowSum<int64_t>(pool, csr, x.data<float>(), x.size(1), out->data<float>());
  }
}

void TransposeFloor(ThreadPool* pool, const kernels::Csr& csr, int64_t* scratch_a, int64_t* scratch_b) {
  const int64_t* idx = csr.indices.data<int64_t>();
  pool->ParallelFor(csr.num_edges(), 1 << 14, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      scratch_a[i] = idx[i];
      scratch_b[i] = i;
    }
  });
  g_sink = static_cast<uint64_t>(scratch_a[0]);
}

namespace {

// The dropout floors' loops as plain functions, cloned for AVX-512 where
// the CPU has it: the kernel stores with AVX-512 there, and a floor loop
// held to AVX2 would be slower than the kernel it bounds.
__attribute__((target_clones("arch=skylake-avx512", "default")))
void ScaleAndMark(const float* __restrict a, float* __restrict o, uint8_t* __restrict m, int64_t s, int64_t e) {
  for (int64_t i = s; i < e; ++i) {
    o[i] = 2.0f * a[i];
    m[i] = 1;
  }
}

__attribute__((target_clones("arch=skylake-avx512", "default")))
void MaskedCopy(const uint8_t* __restrict m, const float* __restrict g, float* __restrict o, int64_t s, int64_t e) {
  for (int64_t i = s; i < e; ++i) o[i] = g[i] * static_cast<float>(m[i]);
}

}  // namespace

void DropoutForwardFloor(ThreadPool* pool, const Tensor& in, Tensor* out, Tensor* mask) {
  const float* a = in.data<float>();
  float* o = out->data<float>();
  uint8_t* m = mask->data<uint8_t>();
  pool->ParallelFor(in.numel(), 1 << 16, [=](int64_t s, int64_t e) { ScaleAndMark(a, o, m, s, e); });
}

void DropoutBackwardFloor(ThreadPool* pool, const Tensor& mask, const Tensor& grad, Tensor* out) {
  const uint8_t* m = mask.data<uint8_t>();
  const float* g = grad.data<float>();
  float* o = out->data<float>();
  pool->ParallelFor(grad.numel(), 1 << 16, [=](int64_t s, int64_t e) { MaskedCopy(m, g, o, s, e); });
}

void OptimizerFloor(ThreadPool* pool, const std::vector<Tensor>& weights, const std::vector<Tensor>& grads,
                    OptimizerState* st) {
  if (st->m.empty()) {
    for (const Tensor& w : weights) {
      st->m.push_back(Tensor::Zeros(w.shape(), DType::kF32));
      st->v.push_back(Tensor::Zeros(w.shape(), DType::kF32));
    }
  }
  struct Chunk {
    float *w, *m, *v;
    const float* g;
    int64_t n;
  };
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < weights.size(); ++i) {
    const int64_t n = weights[i].numel();
    for (int64_t b = 0; b < n; b += kOptimizerGrain) {
      chunks.push_back({weights[i].data<float>() + b, st->m[i].data<float>() + b, st->v[i].data<float>() + b,
                        grads[i].data<float>() + b, std::min(kOptimizerGrain, n - b)});
    }
  }
  pool->ParallelFor(static_cast<int64_t>(chunks.size()), 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      float* __restrict w = chunks[c].w;
      float* __restrict m = chunks[c].m;
      float* __restrict v = chunks[c].v;
      const float* __restrict g = chunks[c].g;
      // Multiplications by 0 keep the weights and state unchanged while
      // every byte is still read and written.
      for (int64_t j = 0; j < chunks[c].n; ++j) {
        m[j] = m[j] + 0.0f * g[j];
        v[j] = v[j] + 0.0f * g[j];
        w[j] = w[j] + 0.0f * (m[j] + v[j]);
      }
    }
  });
}

}  // namespace foresight::bench
