// Varlen multi-head attention on the CPU, FlashAttention-2 style: a tile of
// kTile queries against a tile of kTile keys at a time, with the online
// softmax (running max and denominator per query row), so the scores of a
// sequence never exist as a whole; the backward recomputes each tile's
// scores from the saved log-sum-exp. The tile products (QK^T, PV and the
// four of the backward) go to single-threaded sgemm calls on views of the packed
// rows (no copies); the pool runs one (sequence, head[, query tile]) per
// task, so every output element is written by one task in a fixed order
// and results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu_ops.h"
#include "fast_math.h"
#include "sgemm.h"
#include "transformer_ops.h"

namespace foresight::kernels::cpu {

namespace {

constexpr int64_t kTile = 64;

// Row stride of a [T, E] operand (E when it has one row).
inline int64_t Ld(const Tensor& t) { return t.size(0) > 1 ? t.stride(0) : t.size(1); }

// Keys of tile [j0, j0 + nc) that query i may see: all, or under the causal
// mask those <= i. May be <= 0.
inline int64_t ValidCols(bool causal, int64_t i, int64_t j0, int64_t nc) {
  return causal ? std::min(nc, i - j0 + 1) : nc;
}

// keep[r * kTile + c] = the dropout decision of query i0 + r, key j0 + c
// (positions in the sequence), for the valid columns of each row.
void DropoutTile(RngKey key, float p, bool causal, int64_t i0, int64_t nr, int64_t j0, int64_t nc, uint8_t* keep) {
  for (int64_t r = 0; r < nr; ++r) {
    const int64_t valid = ValidCols(causal, i0 + r, j0, nc);
    for (int64_t c = 0; c < valid; ++c) keep[r * kTile + c] = AttentionDropoutKeep(key, i0 + r, j0 + c, p) ? 1 : 0;
  }
}

// One unit of forward work: query tile [i0, i0 + nr) of head h of sequence b.
struct Item {
  int64_t b, h, i0, nr, len;
};

}  // namespace

Status VarlenAttention(const ExecContext& ctx, const AttentionOptions& opts, const Tensor& q, const Tensor& k,
                       const Tensor& v, const Tensor& cu_seqlens, int64_t max_seqlen, Tensor* out, Tensor* lse) {
  SgemmCalls calls;
  const int64_t total = q.size(0), width = q.size(1), heads = opts.heads, d = width / heads;
  const int64_t batch = cu_seqlens.size(0) - 1;
  const int64_t* cu = cu_seqlens.data<int64_t>();
  const float* pq = q.data<float>();
  const float* pk = k.data<float>();
  const float* pv = v.data<float>();
  const int64_t ldq = Ld(q), ldk = Ld(k), ldv = Ld(v);
  float* po = out->data<float>();
  float* pl = lse->data<float>();
  const float p = opts.dropout, inv_keep = 1.0f / (1.0f - p), scale = opts.scale;
  const bool causal = opts.causal;

  // Work items, longest sequences first so the tail of the loop is short
  // tiles (results do not depend on the order: items write disjoint rows).
  std::vector<Item> items;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = cu[b + 1] - cu[b];
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i0 = 0; i0 < len; i0 += kTile) items.push_back({b, h, i0, std::min(kTile, len - i0), len});
    }
  }
  std::stable_sort(items.begin(), items.end(), [&](const Item& x, const Item& y) {
    return (causal ? x.i0 + x.nr : x.len) > (causal ? y.i0 + y.nr : y.len);
  });

  ctx.pool->ParallelFor(static_cast<int64_t>(items.size()), 1, [&](int64_t w0, int64_t w1) {
    std::vector<float> s(kTile * kTile), acc(kTile * d), m(kTile), l(kTile);
    std::vector<uint8_t> keep(p > 0.0f ? kTile * kTile : 0);
    for (int64_t w = w0; w < w1; ++w) {
      const Item& it = items[w];
      const int64_t base = cu[it.b], i0 = it.i0, nr = it.nr;
      const RngKey key = AttentionDropoutKey(ctx.rng, it.b, it.h);
      const float* qt = pq + (base + i0) * ldq + it.h * d;
      std::fill(m.begin(), m.end(), -std::numeric_limits<float>::infinity());
      std::fill(l.begin(), l.end(), 0.0f);
      std::fill(acc.begin(), acc.end(), 0.0f);
      const int64_t j_end = causal ? i0 + nr : it.len;
      for (int64_t j0 = 0; j0 < j_end; j0 += kTile) {
        const int64_t nc = std::min(kTile, j_end - j0);
        const float* kt = pk + (base + j0) * ldk + it.h * d;
        const float* vt = pv + (base + j0) * ldv + it.h * d;
        calls.Run(false, true, nr, nc, d, scale, qt, ldq, kt, ldk, 0.0f, s.data(), kTile);
        if (p > 0.0f) DropoutTile(key, p, causal, i0, nr, j0, nc, keep.data());
        for (int64_t r = 0; r < nr; ++r) {
          float* sr = s.data() + r * kTile;
          const int64_t valid = ValidCols(causal, i0 + r, j0, nc);
          if (valid <= 0) {
            std::fill(sr, sr + nc, 0.0f);
            continue;
          }
          float mx = m[r];
          for (int64_t c = 0; c < valid; ++c) mx = std::max(mx, sr[c]);
          const float corr = FastExp(m[r] - mx);  // 0 on the first tile (m = -inf)
          float sum = 0.0f;
          for (int64_t c = 0; c < valid; ++c) {
            const float e = FastExp(sr[c] - mx);
            sr[c] = e;
            sum += e;
          }
          std::fill(sr + valid, sr + nc, 0.0f);
          l[r] = l[r] * corr + sum;
          m[r] = mx;
          if (corr != 1.0f) {
            float* ar = acc.data() + r * d;
            for (int64_t x = 0; x < d; ++x) ar[x] *= corr;
          }
          if (p > 0.0f) {
            const uint8_t* kr = keep.data() + r * kTile;
            for (int64_t c = 0; c < valid; ++c) sr[c] = kr[c] ? sr[c] * inv_keep : 0.0f;
          }
        }
        calls.Run(false, false, nr, d, nc, 1.0f, s.data(), kTile, vt, ldv, 1.0f, acc.data(), d);
      }
      for (int64_t r = 0; r < nr; ++r) {
        const float inv_l = 1.0f / l[r];
        float* orow = po + (base + i0 + r) * width + it.h * d;
        const float* ar = acc.data() + r * d;
        for (int64_t x = 0; x < d; ++x) orow[x] = ar[x] * inv_l;
        pl[it.h * total + base + i0 + r] = m[r] + std::log(l[r]);
      }
    }
  });
  (void)max_seqlen;
  return calls.status("VarlenAttention");
}

Status VarlenAttentionBackward(const ExecContext& ctx, const AttentionOptions& opts, const Tensor& q,
                               const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                               const Tensor& grad_out, const Tensor& cu_seqlens, int64_t max_seqlen,
                               Tensor* grad_q, Tensor* grad_k, Tensor* grad_v) {
  SgemmCalls calls;
  const int64_t total = q.size(0), width = q.size(1), heads = opts.heads, d = width / heads;
  const int64_t batch = cu_seqlens.size(0) - 1;
  const int64_t* cu = cu_seqlens.data<int64_t>();
  const float* pq = q.data<float>();
  const float* pk = k.data<float>();
  const float* pv = v.data<float>();
  const float* po = out.data<float>();
  const float* pl = lse.data<float>();
  const float* pdo = grad_out.data<float>();
  float* pdq = grad_q->data<float>();
  float* pdk = grad_k->data<float>();
  float* pdv = grad_v->data<float>();
  const int64_t ldq = Ld(q), ldk = Ld(k), ldv = Ld(v);
  const int64_t lddq = Ld(*grad_q), lddk = Ld(*grad_k), lddv = Ld(*grad_v);
  const float p = opts.dropout, inv_keep = 1.0f / (1.0f - p), scale = opts.scale;
  const bool causal = opts.causal;

  // One task per (sequence, head): it owns that head's columns of the
  // sequence's rows of grad_q, so dQ accumulates over key tiles without
  // atomics and in a fixed order. Longest sequences first.
  std::vector<int64_t> order(static_cast<size_t>(batch * heads));
  for (int64_t w = 0; w < batch * heads; ++w) order[w] = w;
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return cu[x / heads + 1] - cu[x / heads] > cu[y / heads + 1] - cu[y / heads];
  });

  ctx.pool->ParallelFor(batch * heads, 1, [&](int64_t w0, int64_t w1) {
    std::vector<float> pt(kTile * kTile), ds(kTile * kTile), dk_acc(kTile * d), dv_acc(kTile * d), delta;
    std::vector<float> pd(p > 0.0f ? kTile * kTile : 0);
    std::vector<uint8_t> keep(p > 0.0f ? kTile * kTile : 0);
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t b = order[w] / heads, h = order[w] % heads;
      const int64_t base = cu[b], len = cu[b + 1] - cu[b];
      if (len == 0) continue;
      const RngKey key = AttentionDropoutKey(ctx.rng, b, h);
      const int64_t col = h * d;
      const float* lrow = pl + h * total + base;
      // delta_i = dO_i . O_i, the softmax backward's row term (dropout
      // included: O is the dropped-out output).
      delta.assign(static_cast<size_t>(len), 0.0f);
      for (int64_t i = 0; i < len; ++i) {
        const float* gr = pdo + (base + i) * width + col;
        const float* orow = po + (base + i) * width + col;
        float acc = 0.0f;
        for (int64_t x = 0; x < d; ++x) acc += gr[x] * orow[x];
        delta[i] = acc;
        std::memset(pdq + (base + i) * lddq + col, 0, sizeof(float) * d);
      }
      for (int64_t j0 = 0; j0 < len; j0 += kTile) {
        const int64_t nc = std::min(kTile, len - j0);
        const float* kt = pk + (base + j0) * ldk + col;
        const float* vt = pv + (base + j0) * ldv + col;
        std::fill(dk_acc.begin(), dk_acc.end(), 0.0f);
        std::fill(dv_acc.begin(), dv_acc.end(), 0.0f);
        // Under the causal mask, query tiles before the key tile see none of it.
        for (int64_t i0 = causal ? j0 / kTile * kTile : 0; i0 < len; i0 += kTile) {
          const int64_t nr = std::min(kTile, len - i0);
          const float* qt = pq + (base + i0) * ldq + col;
          const float* dot = pdo + (base + i0) * width + col;
          // P = exp(scale q k^T - lse), recomputed.
          calls.Run(false, true, nr, nc, d, scale, qt, ldq, kt, ldk, 0.0f, pt.data(), kTile);
          for (int64_t r = 0; r < nr; ++r) {
            float* prow = pt.data() + r * kTile;
            const int64_t valid = std::max<int64_t>(0, ValidCols(causal, i0 + r, j0, nc));
            const float lr = lrow[i0 + r];
            for (int64_t c = 0; c < valid; ++c) prow[c] = FastExp(prow[c] - lr);
            std::fill(prow + valid, prow + nc, 0.0f);
          }
          const float* pdrop = pt.data();
          if (p > 0.0f) {
            DropoutTile(key, p, causal, i0, nr, j0, nc, keep.data());
            for (int64_t r = 0; r < nr; ++r) {
              const int64_t valid = std::max<int64_t>(0, ValidCols(causal, i0 + r, j0, nc));
              for (int64_t c = 0; c < nc; ++c) {
                pd[r * kTile + c] = c < valid && keep[r * kTile + c] ? pt[r * kTile + c] * inv_keep : 0.0f;
              }
            }
            pdrop = pd.data();
          }
          // dV += P_dropped^T dO
          calls.Run(true, false, nc, d, nr, 1.0f, pdrop, kTile, dot, width, 1.0f, dv_acc.data(), d);
          // dP = dO V^T (w.r.t. the dropped-out weights), then dS.
          calls.Run(false, true, nr, nc, d, 1.0f, dot, width, vt, ldv, 0.0f, ds.data(), kTile);
          for (int64_t r = 0; r < nr; ++r) {
            float* dr = ds.data() + r * kTile;
            const float* prow = pt.data() + r * kTile;
            const float dl = delta[i0 + r];
            if (p > 0.0f) {
              const uint8_t* kr = keep.data() + r * kTile;
              for (int64_t c = 0; c < nc; ++c) dr[c] = prow[c] * ((kr[c] ? dr[c] * inv_keep : 0.0f) - dl);
            } else {
              for (int64_t c = 0; c < nc; ++c) dr[c] = prow[c] * (dr[c] - dl);
            }
          }
          // dQ += scale dS K;  dK += scale dS^T Q
          calls.Run(false, false, nr, d, nc, scale, ds.data(), kTile, kt, ldk, 1.0f, pdq + (base + i0) * lddq + col, lddq);
          calls.Run(true, false, nc, d, nr, scale, ds.data(), kTile, qt, ldq, 1.0f, dk_acc.data(), d);
        }
        for (int64_t c = 0; c < nc; ++c) {
          std::memcpy(pdk + (base + j0 + c) * lddk + col, dk_acc.data() + c * d, sizeof(float) * d);
          std::memcpy(pdv + (base + j0 + c) * lddv + col, dv_acc.data() + c * d, sizeof(float) * d);
        }
      }
    }
  });
  (void)max_seqlen;
  return calls.status("VarlenAttentionBackward");
}

}  // namespace foresight::kernels::cpu
