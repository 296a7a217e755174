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
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/storage/link_triples.h"
#include "link_scorer.h"

namespace foresight::trainer::internal {

struct RankMetrics {
  double mrr = 0, hits1 = 0, hits3 = 0, hits10 = 0;
  int64_t queries = 0;
};

// The true triples a ranking leaves out: the triple arrays (i64 [M, 3],
// usually the dataset's mmap'd splits), held by reference and never
// indexed whole, so their size costs no RAM beyond the mapped pages. Each
// evaluation's QueryFilter scans them once for its own queries.
class KnownTriples {
 public:
  explicit KnownTriples(int64_t num_relations) : num_relations_(num_relations) {}
  // Adds i64 [M, 3] (head, relation, tail) rows: a view, which must stay
  // valid while this object is used.
  void Add(const Tensor& triples) { arrays_.push_back(triples); }
  int64_t num_relations() const { return num_relations_; }
  const std::vector<Tensor>& arrays() const { return arrays_; }

 private:
  int64_t num_relations_;
  std::vector<Tensor> arrays_;
};

// The filter of one set of queries: for each query of `triples` (i64
// [m, 3]; query i < m asks (h_i, r_i, ?), query m + i asks (?, r_i, t_i)),
// the entities the known triples give as answers, only those among
// `candidates` (sorted, distinct; empty = every entity), since masking any
// other changes no rank. Built by one pass over the known arrays (blocks of
// triples in parallel, matches merged in block order); it holds the
// matches and two sorted key arrays of at most m entries, nothing that
// grows with the entities or the known triples. Immutable after Build.
class QueryFilter {
 public:
  static QueryFilter Build(const ExecContext& ctx, const KnownTriples& known, const Tensor& triples,
                           const std::vector<int64_t>& candidates);
  int64_t queries() const { return static_cast<int64_t>(group_.size()); }
  // The known answers of query q: [begin, end), in no particular order.
  const int64_t* begin(int64_t q) const { return entities_.data() + offsets_[static_cast<size_t>(group_[q])]; }
  const int64_t* end(int64_t q) const { return entities_.data() + offsets_[static_cast<size_t>(group_[q]) + 1]; }
  int64_t matches() const { return static_cast<int64_t>(entities_.size()); }
  // The heap bytes it holds.
  int64_t bytes() const;

 private:
  std::vector<int64_t> group_;     // [2m]: each query's group (distinct (entity, relation) of its side)
  std::vector<int64_t> offsets_;   // [groups + 1] into entities_
  std::vector<int64_t> entities_;  // the matches, group by group
};

// `count` distinct entities of [0, num_entities) drawn by a counter-based
// RNG keyed by (seed, draw), sorted; every entity (empty) when count is 0 or
// not below num_entities. Holds O(count) memory.
std::vector<int64_t> SampleCandidates(uint64_t seed, uint64_t draw, int64_t num_entities, int64_t count);

// What every evaluation of one split reuses: its candidates (the same each
// epoch) and its queries' filter.
struct SplitEvaluation {
  std::vector<int64_t> candidates;
  QueryFilter filter;
  int64_t bytes() const { return static_cast<int64_t>(candidates.capacity() * sizeof(int64_t)) + filter.bytes(); }
};

// Adds the training, validation and test triples to *known, then makes
// the validation (eval[0], draw 0) and test (eval[1], draw 1) evaluations:
// their sampled candidates (eval_negatives, seed) and query filters.
void BuildSplitEvaluations(const ExecContext& ctx, const storage::LinkTriples& lt, int64_t eval_negatives,
                           uint64_t seed, KnownTriples* known, SplitEvaluation eval[2]);

// Copies the embeddings (dim floats each) of `keys` into out [keys.size(), dim].
using EmbeddingReader = std::function<Status(const std::vector<int64_t>& keys, float* out)>;

// Ranks every query of `triples` (i64 [M, 3]) against `candidates` (sorted,
// distinct entity ids; every entity when empty, read in blocks) and fills
// `out`. `filter` must have been built for the same triples and candidates
// (InvalidArgument when its query count differs).
// reverse_offset > 0 (reciprocal relations): head queries (?, r, t) are
// asked as tail queries (t, r + reverse_offset, ?). Deterministic for any
// thread count.
Status EvaluateRanking(const ExecContext& ctx, const LinkScorer& scorer, const EmbeddingReader& entities,
                       const EmbeddingReader& relations, int64_t num_entities, const Tensor& triples,
                       const QueryFilter& filter, const std::vector<int64_t>& candidates, RankMetrics* out,
                       int64_t reverse_offset = 0);

}  // namespace foresight::trainer::internal
