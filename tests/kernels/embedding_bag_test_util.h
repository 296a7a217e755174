// Random embedding-bag problems shared by the CPU and CUDA tests: rows with
// state beside them, bags with many duplicate ids, and the same problem as
// the naive reference sees it.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/kernels/ops.h"
#include "reference/embedding_reference.h"

namespace foresight::kernels::test {

using reference::RefBags;
using reference::RefOptimizer;

struct Case {
  int64_t batch = 5, tables = 3, dim = 12, rows_per_table = 7;
  int min_bag = 0, max_bag = 4;  // each bag's length, uniform in [min_bag, max_bag]
  bool table_offsets = true;
  bool psw = false;
  bool mean = false;
  DType id_dtype = DType::kI64;
  DType dtype = DType::kF32;
  SparseOptimizer opt = SparseOptimizer::kSgd;
  uint64_t seed = 1;
};

// A random problem: rows [R, row_width] with random embeddings and state,
// bags with many duplicates (few rows per table).
struct Problem {
  EmbeddingRowLayout layout;
  RefBags ref;
  Tensor weights, table_offsets, ids, offsets, psw, grad_out;
  std::vector<float> emb, state;  // reference copies (widened)
};

inline Problem Make(const Case& c) {
  Problem p;
  p.layout = EmbeddingRowLayout{c.dim, c.dtype, c.opt};
  std::mt19937_64 rng(c.seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int64_t rows = c.tables * c.rows_per_table;
  RefBags& g = p.ref;
  g.batch = c.batch;
  g.tables = c.tables;
  g.dim = c.dim;
  g.mean = c.mean;
  g.offsets.push_back(0);
  for (int64_t t = 0; t < c.tables; ++t) {
    if (c.table_offsets) g.table_offsets.push_back(t * c.rows_per_table);
    for (int64_t b = 0; b < c.batch; ++b) {
      const int len = c.min_bag + static_cast<int>(rng() % (c.max_bag - c.min_bag + 1));
      for (int i = 0; i < len; ++i) {
        const int64_t local = static_cast<int64_t>(rng() % c.rows_per_table);
        g.ids.push_back(c.table_offsets ? local : t * c.rows_per_table + local);
        if (c.psw) g.psw.push_back(u(rng));
      }
      g.offsets.push_back(static_cast<int64_t>(g.ids.size()));
    }
  }
  if (c.table_offsets) g.table_offsets.push_back(rows);
  const int64_t width = p.layout.row_width();
  const int64_t sf = p.layout.state_floats();
  p.weights = Tensor::Zeros({rows, width}, c.dtype);
  p.emb.resize(rows * c.dim);
  p.state.resize(rows * sf);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < c.dim; ++j) {
      float v = u(rng);
      if (c.dtype == DType::kF16) {
        const uint16_t h = FloatToHalf(v);
        p.weights.data<Half>()[r * width + j].bits = h;
        v = HalfToFloat(h);
      } else {
        p.weights.data<float>()[r * width + j] = v;
      }
      p.emb[r * c.dim + j] = v;
    }
    float* st = reinterpret_cast<float*>(static_cast<char*>(p.weights.raw_data()) +
                                         (r * width + p.layout.state_offset()) * DTypeSize(c.dtype));
    for (int64_t s = 0; s < sf; ++s) {
      // Adagrad / Adam second moments must be non-negative.
      const float v = std::fabs(u(rng)) * 0.1f;
      st[s] = v;
      p.state[r * sf + s] = v;
    }
  }
  if (c.table_offsets) {
    p.table_offsets = Tensor::Empty({c.tables + 1}, DType::kI64);
    for (int64_t t = 0; t <= c.tables; ++t) p.table_offsets.data<int64_t>()[t] = g.table_offsets[t];
  }
  const int64_t n = static_cast<int64_t>(g.ids.size());
  p.ids = Tensor::Empty({n}, c.id_dtype);
  for (int64_t k = 0; k < n; ++k) {
    if (c.id_dtype == DType::kI32) {
      p.ids.data<int32_t>()[k] = static_cast<int32_t>(g.ids[k]);
    } else {
      p.ids.data<int64_t>()[k] = g.ids[k];
    }
  }
  p.offsets = Tensor::Empty({static_cast<int64_t>(g.offsets.size())}, DType::kI64);
  for (size_t i = 0; i < g.offsets.size(); ++i) p.offsets.data<int64_t>()[i] = g.offsets[i];
  if (c.psw) {
    p.psw = Tensor::Empty({n}, DType::kF32);
    for (int64_t k = 0; k < n; ++k) p.psw.data<float>()[k] = g.psw[k];
  }
  p.grad_out = Tensor::Empty({c.batch, c.tables * c.dim}, DType::kF32);
  for (int64_t i = 0; i < p.grad_out.numel(); ++i) p.grad_out.data<float>()[i] = u(rng);
  return p;
}

inline std::vector<float> Embeddings(const Problem& p) {
  const int64_t rows = p.weights.size(0), width = p.layout.row_width(), dim = p.layout.dim;
  std::vector<float> out(rows * dim);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < dim; ++j) {
      out[r * dim + j] = p.layout.dtype == DType::kF16 ? HalfToFloat(p.weights.data<Half>()[r * width + j].bits)
                                                       : p.weights.data<float>()[r * width + j];
    }
  }
  return out;
}

inline std::vector<float> State(const Problem& p) {
  const int64_t rows = p.weights.size(0), width = p.layout.row_width(), sf = p.layout.state_floats();
  std::vector<float> out(rows * sf);
  for (int64_t r = 0; r < rows; ++r) {
    const float* st = reinterpret_cast<const float*>(static_cast<const char*>(p.weights.raw_data()) +
                                                     (r * width + p.layout.state_offset()) *
                                                         DTypeSize(p.layout.dtype));
    for (int64_t s = 0; s < sf; ++s) out[r * sf + s] = st[s];
  }
  return out;
}

inline std::vector<float> Vec(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

inline Pooling PoolingOf(const Case& c) { return c.mean ? Pooling::kMean : Pooling::kSum; }

inline SparseOptimizerConfig ConfigOf(SparseOptimizer opt) {
  SparseOptimizerConfig cfg;
  cfg.kind = opt;
  cfg.lr = 0.05f;
  cfg.step = 3;
  cfg.weight_decay = opt == SparseOptimizer::kAdam ? 0.01f : 0.0f;
  return cfg;
}

inline RefOptimizer RefOf(const SparseOptimizerConfig& c) {
  RefOptimizer o;
  o.kind = static_cast<int>(c.kind);
  o.lr = c.lr;
  o.eps = c.eps;
  o.beta1 = c.beta1;
  o.beta2 = c.beta2;
  o.weight_decay = c.weight_decay;
  o.step = c.step;
  return o;
}

inline Tensor Forward(const Problem& p, const Case& c, ThreadPool* pool) {
  ExecContext ctx = CpuContext(0, pool);
  Tensor out = Tensor::Empty({c.batch, c.tables * c.dim}, DType::kF32);
  Status s = EmbeddingBagForward(ctx, p.layout, p.weights, p.table_offsets, p.ids, p.offsets, p.psw, PoolingOf(c),
                                 &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

inline void Backward(Problem* p, const Case& c, const SparseOptimizerConfig& cfg, ThreadPool* pool) {
  ExecContext ctx = CpuContext(0, pool);
  Status s = EmbeddingBagBackwardUpdate(ctx, p->layout, cfg, p->table_offsets, p->ids, p->offsets, p->psw,
                                        PoolingOf(c), p->grad_out, &p->weights);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

inline std::vector<Case> AllCases() {
  std::vector<Case> cases;
  uint64_t seed = 1;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    for (SparseOptimizer opt : {SparseOptimizer::kSgd, SparseOptimizer::kRowwiseAdagrad, SparseOptimizer::kAdam}) {
      for (int variant = 0; variant < 4; ++variant) {
        Case c;
        c.dtype = dtype;
        c.opt = opt;
        c.seed = seed++;
        c.mean = variant == 1;
        c.psw = variant == 2;
        c.table_offsets = variant != 3;
        c.id_dtype = variant % 2 == 0 ? DType::kI64 : DType::kI32;
        c.dim = dtype == DType::kF16 ? 13 : 12;  // odd f16 dim: padded state
        cases.push_back(c);
      }
    }
  }
  return cases;
}

inline std::string Name(const Case& c) {
  return std::string(DTypeName(c.dtype)) + "/" + SparseOptimizerName(c.opt) + (c.mean ? "/mean" : "/sum") +
         (c.psw ? "/weighted" : "") + (c.table_offsets ? "/tables" : "/direct") + "/" + DTypeName(c.id_dtype);
}

}  // namespace foresight::kernels::test
