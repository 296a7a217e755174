// EvaluateRanking (link_eval.h): candidates are read in blocks (a table on
// disk is never read whole), queries scored against a block in chunks by
// the scorer's GEMM, the true and filtered entities masked, and higher /
// equal scores counted per query.
#include "link_eval.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_set>
#include <utility>

#include "foresight/core/rng.h"

namespace foresight::trainer::internal {
namespace {

constexpr int64_t kCandidateBlock = 8192;  // candidate rows read at a time
constexpr int64_t kQueryChunk = 512;       // queries per GEMM
constexpr uint64_t kCandidateStream = 0x4556414Cull;  // "EVAL"
constexpr int64_t kFilterBlock = 65536;    // known triples a filter task scans

}  // namespace

std::vector<int64_t> SampleCandidates(uint64_t seed, uint64_t draw, int64_t num_entities, int64_t count) {
  std::vector<int64_t> candidates;
  if (count <= 0 || count >= num_entities) return candidates;
  const RngKey key = RngKey::FromSeed(seed).Fold(kCandidateStream).Fold(draw);
  std::unordered_set<int64_t> taken;
  taken.reserve(static_cast<size_t>(count) * 2);
  for (int64_t k = 0; static_cast<int64_t>(candidates.size()) < count; ++k) {
    const int64_t e = static_cast<int64_t>(key.Below(static_cast<uint64_t>(num_entities), 0, static_cast<uint64_t>(k)));
    if (taken.insert(e).second) candidates.push_back(e);
  }
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

QueryFilter QueryFilter::Build(const ExecContext& ctx, const KnownTriples& known, const Tensor& triples,
                               const std::vector<int64_t>& candidates) {
  QueryFilter f;
  const int64_t m = triples.size(0);
  const int64_t nr = std::max<int64_t>(known.num_relations(), 1);
  const int64_t* tp = triples.data<int64_t>();
  // Keys of the two sides' queries: (h, r) for tail queries, (t, r) for
  // head queries, each as entity * R + relation; a side's distinct keys are
  // its groups (queries that share a key share their matches).
  std::vector<int64_t> keys[2];
  for (int side = 0; side < 2; ++side) {
    keys[side].resize(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) keys[side][static_cast<size_t>(i)] = tp[3 * i + 2 * side] * nr + tp[3 * i + 1];
    std::sort(keys[side].begin(), keys[side].end());
    keys[side].erase(std::unique(keys[side].begin(), keys[side].end()), keys[side].end());
  }
  const int64_t tail_groups = static_cast<int64_t>(keys[0].size());
  auto group_of = [&](int side, int64_t key) -> int64_t {  // -1 when no query has the key
    const std::vector<int64_t>& k = keys[side];
    auto it = std::lower_bound(k.begin(), k.end(), key);
    if (it == k.end() || *it != key) return -1;
    return (side == 0 ? 0 : tail_groups) + (it - k.begin());
  };
  f.group_.resize(static_cast<size_t>(2 * m));
  for (int64_t i = 0; i < m; ++i) {
    f.group_[static_cast<size_t>(i)] = group_of(0, tp[3 * i] * nr + tp[3 * i + 1]);
    f.group_[static_cast<size_t>(m + i)] = group_of(1, tp[3 * i + 2] * nr + tp[3 * i + 1]);
  }
  const int64_t groups = tail_groups + static_cast<int64_t>(keys[1].size());
  auto wanted = [&](int64_t e) {
    return candidates.empty() || std::binary_search(candidates.begin(), candidates.end(), e);
  };
  // One pass over the known arrays in blocks; each block's (group, entity)
  // matches, merged in block order so the result is the same for any
  // thread count.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> found;
  for (const Tensor& a : known.arrays()) {
    const int64_t n = a.size(0);
    const int64_t* p = a.data<int64_t>();
    const int64_t blocks = (n + kFilterBlock - 1) / kFilterBlock;
    const size_t first = found.size();
    found.resize(first + static_cast<size_t>(blocks));
    ctx.pool->ParallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        std::vector<std::pair<int64_t, int64_t>>& out = found[first + static_cast<size_t>(b)];
        for (int64_t i = b * kFilterBlock, e = std::min(n, (b + 1) * kFilterBlock); i < e; ++i) {
          const int64_t h = p[3 * i], r = p[3 * i + 1], t = p[3 * i + 2];
          const int64_t gt = group_of(0, h * nr + r);
          if (gt >= 0 && wanted(t)) out.emplace_back(gt, t);
          const int64_t gh = group_of(1, t * nr + r);
          if (gh >= 0 && wanted(h)) out.emplace_back(gh, h);
        }
      }
    });
  }
  f.offsets_.assign(static_cast<size_t>(groups + 1), 0);
  for (const auto& block : found) {
    for (const auto& [g, e] : block) ++f.offsets_[static_cast<size_t>(g) + 1];
  }
  for (int64_t g = 0; g < groups; ++g) f.offsets_[static_cast<size_t>(g) + 1] += f.offsets_[static_cast<size_t>(g)];
  f.entities_.resize(static_cast<size_t>(f.offsets_.back()));
  std::vector<int64_t> next(f.offsets_.begin(), f.offsets_.end() - 1);
  for (auto& block : found) {
    for (const auto& [g, e] : block) f.entities_[static_cast<size_t>(next[static_cast<size_t>(g)]++)] = e;
    std::vector<std::pair<int64_t, int64_t>>().swap(block);
  }
  return f;
}

int64_t QueryFilter::bytes() const {
  return static_cast<int64_t>((group_.capacity() + offsets_.capacity() + entities_.capacity()) * sizeof(int64_t));
}

void BuildSplitEvaluations(const ExecContext& ctx, const storage::LinkTriples& lt, int64_t eval_negatives,
                           uint64_t seed, KnownTriples* known, SplitEvaluation eval[2]) {
  known->Add(lt.train());
  known->Add(lt.val());
  known->Add(lt.test());
  for (int split = 0; split < 2; ++split) {
    SplitEvaluation& s = eval[split];
    s.candidates = SampleCandidates(seed, static_cast<uint64_t>(split), lt.num_entities(), eval_negatives);
    s.filter = QueryFilter::Build(ctx, *known, split == 0 ? lt.val() : lt.test(), s.candidates);
  }
}

Status EvaluateRanking(const ExecContext& ctx, const LinkScorer& scorer, const EmbeddingReader& entities,
                       const EmbeddingReader& relations, int64_t num_entities, const Tensor& triples,
                       const QueryFilter& filter, const std::vector<int64_t>& sampled, RankMetrics* out,
                       int64_t reverse_offset) {
  *out = RankMetrics();
  const int64_t m = triples.size(0), d = scorer.dim();
  if (m == 0) return Status::OK();
  if (filter.queries() != 2 * m) {
    return InvalidArgument("EvaluateRanking: the filter was built for " + std::to_string(filter.queries()) +
                           " queries, not the " + std::to_string(2 * m) + " of these " + std::to_string(m) +
                           " triples");
  }
  const int64_t* tp = triples.data<int64_t>();
  // Query rows: [0, m) rank tails of (h, r, ?), [m, 2m) heads of (?, r, t).
  std::vector<int64_t> heads(static_cast<size_t>(m)), rels(static_cast<size_t>(m)), tails(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    heads[static_cast<size_t>(i)] = tp[3 * i];
    rels[static_cast<size_t>(i)] = tp[3 * i + 1];
    tails[static_cast<size_t>(i)] = tp[3 * i + 2];
  }
  Tensor h = Tensor::Empty({m, d}, DType::kF32), r = Tensor::Empty({m, d}, DType::kF32),
         t = Tensor::Empty({m, d}, DType::kF32);
  FS_RETURN_IF_ERROR(entities(heads, h.data<float>()));
  FS_RETURN_IF_ERROR(entities(tails, t.data<float>()));
  FS_RETURN_IF_ERROR(relations(rels, r.data<float>()));
  Tensor rr = r;  // the head queries' relation rows
  if (reverse_offset > 0) {
    std::vector<int64_t> reverse(rels);
    for (int64_t& k : reverse) k += reverse_offset;
    rr = Tensor::Empty({m, d}, DType::kF32);
    FS_RETURN_IF_ERROR(relations(reverse, rr.data<float>()));
  }
  const int64_t nq = 2 * m;
  Tensor q = Tensor::Empty({nq, d}, DType::kF32);
  std::vector<float> truth(static_cast<size_t>(nq));
  std::vector<int64_t> answer(static_cast<size_t>(nq));
  for (int64_t i = 0; i < m; ++i) {
    const float* hi = h.data<float>() + i * d;
    const float* ri = r.data<float>() + i * d;
    const float* ti = t.data<float>() + i * d;
    float* qt = q.data<float>() + i * d;
    float* qh = q.data<float>() + (m + i) * d;
    scorer.Query(LinkSide::kTail, hi, ri, qt);
    if (reverse_offset > 0) {
      scorer.Query(LinkSide::kTail, ti, rr.data<float>() + i * d, qh);
    } else {
      scorer.Query(LinkSide::kHead, ti, ri, qh);
    }
    truth[static_cast<size_t>(i)] = scorer.Pair(qt, ti);
    truth[static_cast<size_t>(m + i)] = scorer.Pair(qh, hi);
    answer[static_cast<size_t>(i)] = tails[static_cast<size_t>(i)];
    answer[static_cast<size_t>(m + i)] = heads[static_cast<size_t>(i)];
  }

  // Every entity: blocks of consecutive ids, made as they are read.
  const int64_t nc = sampled.empty() ? num_entities : static_cast<int64_t>(sampled.size());
  std::vector<int64_t> higher(static_cast<size_t>(nq), 0), equal(static_cast<size_t>(nq), 0);
  const int64_t block = std::min(kCandidateBlock, std::max<int64_t>(nc, 1));
  Tensor x = Tensor::Empty({block, d}, DType::kF32);
  Tensor s = Tensor::Empty({kQueryChunk, block}, DType::kF32);
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  for (int64_t c0 = 0; c0 < nc; c0 += block) {
    const int64_t c1 = std::min(nc, c0 + block), bn = c1 - c0;
    std::vector<int64_t> keys(static_cast<size_t>(bn));
    if (sampled.empty()) {
      std::iota(keys.begin(), keys.end(), c0);
    } else {
      std::copy(sampled.begin() + c0, sampled.begin() + c1, keys.begin());
    }
    FS_RETURN_IF_ERROR(entities(keys, x.data<float>()));
    const Tensor xb = x.Slice(0, 0, bn);
    for (int64_t q0 = 0; q0 < nq; q0 += kQueryChunk) {
      const int64_t q1 = std::min(nq, q0 + kQueryChunk);
      Tensor sb = s.Slice(0, 0, q1 - q0).Slice(1, 0, bn);
      FS_RETURN_IF_ERROR(scorer.Scores(ctx, q.Slice(0, q0, q1), xb, &sb));
      float* sp = sb.data<float>();
      const int64_t ss = sb.stride(0);
      ctx.pool->ParallelFor(q1 - q0, 16, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const size_t qi = static_cast<size_t>(q0 + i);
          float* row = sp + i * ss;
          auto mask = [&](int64_t key) {
            auto it = std::lower_bound(keys.begin(), keys.end(), key);
            if (it != keys.end() && *it == key) row[it - keys.begin()] = kMasked;
          };
          mask(answer[qi]);
          for (const int64_t* k = filter.begin(q0 + i); k != filter.end(q0 + i); ++k) mask(*k);
          const float target = truth[qi];
          int64_t hi = 0, eq = 0;
          for (int64_t j = 0; j < bn; ++j) {
            hi += row[j] > target;
            eq += row[j] == target;
          }
          higher[qi] += hi;
          equal[qi] += eq;
        }
      });
    }
  }
  for (int64_t i = 0; i < nq; ++i) {
    const double rank = 1.0 + static_cast<double>(higher[static_cast<size_t>(i)]) +
                        0.5 * static_cast<double>(equal[static_cast<size_t>(i)]);
    out->mrr += 1.0 / rank;
    out->hits1 += rank <= 1.0;
    out->hits3 += rank <= 3.0;
    out->hits10 += rank <= 10.0;
  }
  out->queries = nq;
  out->mrr /= static_cast<double>(nq);
  out->hits1 /= static_cast<double>(nq);
  out->hits3 /= static_cast<double>(nq);
  out->hits10 /= static_cast<double>(nq);
  return Status::OK();
}

}  // namespace foresight::trainer::internal
