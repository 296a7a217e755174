// Inverted dropout. The keep decision of flat element i is
// ctx.rng.StreamUniform(i, 0) >= p: a pure function of the key and i (of
// row id * cols + column for DropoutRows, keyed_dropout.h). One
// Philox call serves four elements, which is what makes dropout cheap next
// to the GEMMs (a call per element cost more than the layer's matmul).
#include <cmath>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "cpu_ops.h"
#include "../keyed_dropout_ops.h"
#include "dropout_span.h"
#include "philox_avx512.h"
#include "philox_simd.h"

namespace foresight::kernels::cpu {

static_assert(kElementGrain % 128 == 0, "dropout groups four elements per Philox call, 32 per AVX2 step, 128 per AVX-512 step");

namespace {

#if defined(__AVX2__)
// Dropout of the 32 elements of stream position g (a multiple of 4) on, at
// px / po / pm: Philox4x32-10
// of the counters (g / 4 + j, draw 0) for j = 0..7 in the eight lanes, the
// same words as RngKey::Bits, so results equal the scalar loop bit for bit.
// That loop is bound by Philox's multiplies (about 12 cycles per element);
// eight lanes at once bring it near the memory floor.
template <bool kRelu>
inline void Dropout32(const RngKey& rng, int64_t g, int32_t threshold, float scale, const float* px, float* po,
                      uint8_t* pm) {
  const uint64_t base = static_cast<uint64_t>(g) >> 2;
  alignas(32) uint32_t lo_words[8], hi_words[8];
  for (int j = 0; j < 8; ++j) {
    lo_words[j] = static_cast<uint32_t>(base + j);
    hi_words[j] = static_cast<uint32_t>((base + j) >> 32);
  }
  __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_words));
  __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_words));
  __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
  Philox8(rng.key, &c0, &c1, &c2, &c3);
  // Words (c0..c3) of lane j belong to elements g + 4j .. g + 4j + 3:
  // transpose the 4 x 8 word matrix into element order.
  const __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
  const __m256i t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
  const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
  const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
  const __m256i words[4] = {_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u2, u3, 0x20),
                            _mm256_permute2x128_si256(u0, u1, 0x31), _mm256_permute2x128_si256(u2, u3, 0x31)};
  // keep <=> (w >> 8) * 2^-24 >= p <=> (w >> 8) >= threshold (exact: both
  // sides are integers below 2^24 scaled by a power of two).
  const __m256i below = _mm256_set1_epi32(threshold - 1);
  const __m256 vscale = _mm256_set1_ps(scale);
  __m256i keep[4];
  for (int q = 0; q < 4; ++q) {
    keep[q] = _mm256_cmpgt_epi32(_mm256_srli_epi32(words[q], 8), below);
    const __m256 x = _mm256_loadu_ps(px + 8 * q);
    if (kRelu) {  // ReLU's x > 0 (false for NaN, as ReluSelect)
      keep[q] = _mm256_and_si256(keep[q], _mm256_castps_si256(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ)));
    }
    _mm256_storeu_ps(po + 8 * q, _mm256_and_ps(_mm256_castsi256_ps(keep[q]), _mm256_mul_ps(x, vscale)));
  }
  if (pm != nullptr) {
    // -1/0 dwords -> 0/1 bytes in element order.
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(keep[0], keep[1]), _mm256_packs_epi32(keep[2], keep[3]));
    const __m256i ordered = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(pm), _mm256_and_si256(ordered, _mm256_set1_epi8(1)));
  }
}
#endif

#if defined(FS_HAVE_AVX512_PHILOX)
// See philox_avx512.h for these diagnostics.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Dropout of the 128 elements of stream position g (a multiple of 4) on,
// at px / po / pm, with
// AVX-512 (philox_avx512.h): the 32 Philox counters g / 4 + j, one per
// 64-bit lane. The eight-lane AVX2 round left the forward pass
// compute-bound. The same words, so the same bits, as RngKey::Bits.
template <bool kRelu>
FS_AVX512 void Dropout128Avx512(uint64_t key, int64_t g, int32_t threshold, float scale, const float* px,
                                float* po, uint8_t* pm) {
  constexpr int kSets = 4;  // independent sets of eight counters: hides vpmuludq's latency
  const uint64_t base = static_cast<uint64_t>(g) >> 2;
  const __m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  __m512i c0[kSets], c1[kSets], c2[kSets], c3[kSets];
  for (int s = 0; s < kSets; ++s) {
    const __m512i ctr = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(base + 8 * s)), iota);
    c0[s] = ctr;                          // counter word 0: the low 32 bits
    c1[s] = _mm512_srli_epi64(ctr, 32);   // counter word 1: the high 32 bits
    c2[s] = _mm512_setzero_si512();       // draw 0
    c3[s] = _mm512_setzero_si512();
  }
  PhiloxRounds8x64<kSets>(key, c0, c1, c2, c3);
  const __m512i below = _mm512_set1_epi32(threshold - 1);
  const __m512 vscale = _mm512_set1_ps(scale);
  const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
  const __m512i second = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  for (int s = 0; s < kSets; ++s) {
    // Counter j's words x, y, z, w are elements 4j .. 4j + 3 of the set:
    // pair them into 64-bit lanes, interleave, and restore lane order.
    const __m512i xy = _mm512_mask_blend_epi32(0xAAAA, c0[s], _mm512_slli_epi64(c1[s], 32));
    const __m512i zw = _mm512_mask_blend_epi32(0xAAAA, c2[s], _mm512_slli_epi64(c3[s], 32));
    const __m512i lo = _mm512_unpacklo_epi64(xy, zw);  // counters 0, 2, 4, 6
    const __m512i hi = _mm512_unpackhi_epi64(xy, zw);  // counters 1, 3, 5, 7
    const __m512i words[2] = {_mm512_permutex2var_epi64(lo, first, hi), _mm512_permutex2var_epi64(lo, second, hi)};
    for (int h = 0; h < 2; ++h) {
      const int64_t at = 32 * s + 16 * h;
      // keep <=> (w >> 8) >= threshold, as in Dropout32.
      __mmask16 keep = _mm512_cmpgt_epi32_mask(_mm512_srli_epi32(words[h], 8), below);
      const __m512 x = _mm512_loadu_ps(px + at);
      if (kRelu) keep &= _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);  // ReLU's x > 0
      _mm512_storeu_ps(po + at, _mm512_maskz_mul_ps(keep, x, vscale));
      if (pm != nullptr) _mm_storeu_si128(reinterpret_cast<__m128i*>(pm + at), _mm_maskz_set1_epi8(keep, 1));
    }
  }
}

#pragma GCC diagnostic pop
#endif

// Dropout of the n elements of stream positions [g, g + n) at px / po / pm:
// single elements up to the next multiple of four, then whole Philox calls
// in SIMD lanes (AVX-512, AVX2) or one by one, then single elements for the
// tail. Every path draws RngKey::StreamUniform's words, so the bits do not depend on
// the split. Any start: a keyed row (DropoutRows) starts at id * cols.
// kRelu: dropout of ReLU(x) (ReluDropoutRows): an element is kept, and its
// mask byte 1, only where the draw keeps it and x > 0. The product is then
// x * scale where relu(x) * scale was, and 0 where relu's 0 * scale was 0:
// the two kernels' bits.
template <bool kRelu>
void DropoutSpan(const RngKey& rng, uint64_t g, int64_t n, float p, int32_t threshold, float scale,
                 const float* px, float* po, uint8_t* pm) {
  int64_t i = 0;
  const auto one = [&](int64_t k) {
    const bool keep = rng.StreamUniform(g + static_cast<uint64_t>(k), 0) >= p && (!kRelu || px[k] > 0.0f);
    po[k] = keep ? px[k] * scale : 0.0f;
    if (pm != nullptr) pm[k] = keep ? 1 : 0;
  };
  for (; i < n && ((g + static_cast<uint64_t>(i)) & 3) != 0; ++i) one(i);
#if defined(FS_HAVE_AVX512_PHILOX)
  if (HaveAvx512()) {
    for (; i + 128 <= n; i += 128) {
      Dropout128Avx512<kRelu>(rng.key, static_cast<int64_t>(g + i), threshold, scale, px + i, po + i,
                              pm != nullptr ? pm + i : nullptr);
    }
  }
#endif
#if defined(__AVX2__)
  for (; i + 32 <= n; i += 32) {
    Dropout32<kRelu>(rng, static_cast<int64_t>(g + i), threshold, scale, px + i, po + i,
                     pm != nullptr ? pm + i : nullptr);
  }
#endif
  (void)threshold;
  for (; i + 4 <= n; i += 4) {  // one Philox call for four elements
    const Uint4 b = rng.Bits((g + static_cast<uint64_t>(i)) >> 2, 0);
    const uint32_t words[4] = {b.x, b.y, b.z, b.w};
    for (int k = 0; k < 4; ++k) {
      const bool keep =
          static_cast<float>(words[k] >> 8) * (1.0f / 16777216.0f) >= p && (!kRelu || px[i + k] > 0.0f);
      po[i + k] = keep ? px[i + k] * scale : 0.0f;
      if (pm != nullptr) pm[i + k] = keep ? 1 : 0;
    }
  }
  for (; i < n; ++i) one(i);
}

// ceil(p * 2^24): p * 2^24 is exact in float for p in [0, 1).
int32_t Threshold(float p) { return static_cast<int32_t>(std::ceil(p * 16777216.0f)); }

}  // namespace

void DropoutStreamSpan(const RngKey& rng, uint64_t g, int64_t n, float p, const float* px, float* po, uint8_t* pm) {
  DropoutSpan<false>(rng, g, n, p, Threshold(p), 1.0f / (1.0f - p), px, po, pm);
}

Status Dropout(const ExecContext& ctx, float p, const Tensor& x, Tensor* out, Tensor* mask) {
  const float* px = x.data<float>();
  float* po = out->data<float>();
  uint8_t* pm = mask != nullptr ? mask->data<uint8_t>() : nullptr;
  const float scale = 1.0f / (1.0f - p);
  const int32_t threshold = Threshold(p);
  const RngKey rng = ctx.rng;
  ctx.pool->ParallelFor(x.numel(), kElementGrain, [&](int64_t s, int64_t e) {
    DropoutSpan<false>(rng, static_cast<uint64_t>(s), e - s, p, threshold, scale, px + s, po + s,
                       pm != nullptr ? pm + s : nullptr);
  });
  return Status::OK();
}

Status DropoutRows(const ExecContext& ctx, float p, const Tensor& x, const Tensor& row_ids, Tensor* out,
                   Tensor* mask, bool relu) {
  const int64_t rows = x.size(0), cols = x.numel() / (rows > 0 ? rows : 1);
  const float* px = x.data<float>();
  const int64_t* ids = row_ids.data<int64_t>();
  float* po = out->data<float>();
  uint8_t* pm = mask != nullptr ? mask->data<uint8_t>() : nullptr;
  const float scale = 1.0f / (1.0f - p);
  const int32_t threshold = Threshold(p);
  const RngKey rng = ctx.rng;
  ctx.pool->ParallelFor(rows, RowGrain(cols), [&](int64_t s, int64_t e) {
    for (int64_t r = s; r < e; ++r) {
      // Row r is row ids[r] of a virtual [*, cols] matrix: stream positions
      // ids[r] * cols on (wrapping for hashed ids, still one position each).
      const uint64_t g = static_cast<uint64_t>(ids[r]) * static_cast<uint64_t>(cols);
      const int64_t at = r * cols;
      uint8_t* m = pm != nullptr ? pm + at : nullptr;
      if (relu) {
        DropoutSpan<true>(rng, g, cols, p, threshold, scale, px + at, po + at, m);
      } else {
        DropoutSpan<false>(rng, g, cols, p, threshold, scale, px + at, po + at, m);
      }
    }
  });
  return Status::OK();
}

Status DropoutEdgeKeys(const ExecContext& ctx, const Csr& csr, const Tensor& src_ids, Tensor* keys) {
  const int64_t num_dst = csr.num_dst();
  const int64_t* ip = csr.indptr.data<int64_t>();
  const int64_t* ids = src_ids.data<int64_t>();
  int64_t* out = keys->data<int64_t>();
  WithIndexType(csr.indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    const I* idx = csr.indices.data<I>();
    const int64_t grain = RowGrain(csr.num_edges() / (num_dst > 0 ? num_dst : 1) + 1);
    ctx.pool->ParallelFor(num_dst, grain, [&](int64_t s, int64_t e) {
      for (int64_t v = s; v < e; ++v) {
        for (int64_t k = ip[v]; k < ip[v + 1]; ++k) {
          out[k] = DropoutEdgeKey(ids[v], ids[static_cast<int64_t>(idx[k])]);
        }
      }
    });
  });
  return Status::OK();
}

Status DropoutBackward(const ExecContext& ctx, float p, const Tensor& mask, const Tensor& grad_out,
                       Tensor* grad_x) {
  const uint8_t* pm = mask.data<uint8_t>();
  const float* pg = grad_out.data<float>();
  float* po = grad_x->data<float>();
  const float scale = 1.0f / (1.0f - p);
  ctx.pool->ParallelFor(grad_out.numel(), kElementGrain, [pm, pg, po, scale](int64_t s, int64_t e) {
    // Branch-free: the mask is random, so a branch per element mispredicts
    // half the time (it ran at a fifth of the memory rate).
    const uint8_t* __restrict m = pm;
    const float* __restrict g = pg;
    float* __restrict o = po;
    int64_t i = s;
#if defined(__AVX2__)
    const __m256 vscale = _mm256_set1_ps(scale);
    for (; i + 8 <= e; i += 8) {
      const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(m + i));
      const __m256i keep = _mm256_cmpgt_epi32(_mm256_cvtepu8_epi32(bytes), _mm256_setzero_si256());
      const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(g + i), vscale);
      _mm256_storeu_ps(o + i, _mm256_and_ps(_mm256_castsi256_ps(keep), v));
    }
#endif
    for (; i < e; ++i) {
      const float v = g[i] * scale;
      o[i] = m[i] != 0 ? v : 0.0f;
    }
  });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
