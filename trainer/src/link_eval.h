// Filtered ranking for link prediction (private to the trainer): each
// triple (h, r, t) asks two queries, (h, r, ?) and (?, r, t); the true
// entity is ranked against the candidates (every entity, or a seeded
// sample) with every other entity known to complete the query (in the
// training, validation or test triples) left out. Ties count half: rank =
// 1 + #higher + #equal / 2. MRR is the mean of 1 / rank over the queries,
// Hits@k the fraction with rank <= k.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "link_scorer.h"

namespace foresight::trainer::internal {

struct RankMetrics {
  double mrr = 0, hits1 = 0, hits3 = 0, hits10 = 0;
  int64_t queries = 0;
};

// The true triples a ranking leaves out.
class KnownTriples {
 public:
  explicit KnownTriples(int64_t num_relations) : num_relations_(num_relations) {}
  // Adds i64 [M, 3] (head, relation, tail) rows.
  void Add(const Tensor& triples);
  // The entities known to complete (h, r, ?) / (?, r, t); null when none.
  const std::vector<int64_t>* Tails(int64_t h, int64_t r) const { return Find(tails_, h, r); }
  const std::vector<int64_t>* Heads(int64_t t, int64_t r) const { return Find(heads_, t, r); }

 private:
  using Map = std::unordered_map<int64_t, std::vector<int64_t>>;
  const std::vector<int64_t>* Find(const Map& m, int64_t e, int64_t r) const {
    auto it = m.find(e * num_relations_ + r);
    return it == m.end() ? nullptr : &it->second;
  }
  int64_t num_relations_;
  Map tails_, heads_;
};

// Copies the embeddings (dim floats each) of `keys` into out [keys.size(), dim].
using EmbeddingReader = std::function<Status(const std::vector<int64_t>& keys, float* out)>;

// Ranks every query of `triples` (i64 [M, 3]) against `candidates` (sorted,
// distinct entity ids; every entity when empty) and fills `out`.
// reverse_offset > 0 (reciprocal relations): head queries (?, r, t) are
// asked as tail queries (t, r + reverse_offset, ?). Deterministic for any
// thread count.
Status EvaluateRanking(const ExecContext& ctx, const LinkScorer& scorer, const EmbeddingReader& entities,
                       const EmbeddingReader& relations, int64_t num_entities, const Tensor& triples,
                       const KnownTriples& known, const std::vector<int64_t>& candidates, RankMetrics* out,
                       int64_t reverse_offset = 0);

}  // namespace foresight::trainer::internal
