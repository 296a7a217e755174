// The score functions of shallow link prediction (private to the trainer).
// Every model scores a triple (h, r, t) as a function of a query built from
// two of its rows and a candidate row, so ranking a query against many
// candidates is one GEMM (or, for TransE, a GEMM plus row norms):
//   corrupting the tail: query q = Query(kTail, h, r), candidates are tails;
//   corrupting the head: query q = Query(kHead, t, r), candidates are heads.
//   distmult  s = <h, r, t>               q = h * r         / t * r
//   complex   s = Re<h, r, conj(t)>       (first dim/2 floats real parts,
//                                          the rest imaginary)
//   transe    s = margin - ||h + r - t||  q = h + r         / t - r
//   dot       s = <h, t>                  q = h             / t (no relation)
// All arrays are host f32, rows of `dim` floats, row-major.
#pragma once

#include <cstdint>
#include <string>

#include "foresight/core/context.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight::trainer::internal {

enum class LinkSide { kTail, kHead };  // which end is corrupted (ranked)

class LinkScorer {
 public:
  enum class Kind { kDistMult, kComplEx, kTransE, kDot };
  // InvalidArgument for an unknown model name or an odd complex dim.
  static StatusOr<LinkScorer> Create(const std::string& model, int64_t dim, float margin);

  Kind kind() const { return kind_; }
  int64_t dim() const { return dim_; }
  bool uses_relation() const { return kind_ != Kind::kDot; }

  // q = the query of (anchor, rel) for `side`: anchor is h for kTail, t for kHead.
  void Query(LinkSide side, const float* anchor, const float* rel, float* q) const;
  // Adds d(anchor) and d(rel) for a gradient dq of the query.
  void QueryBackward(LinkSide side, const float* anchor, const float* rel, const float* dq, float* danchor,
                     float* drel) const;
  // The score of one query against one candidate.
  float Pair(const float* q, const float* x) const;
  // Adds g * d(score)/dq to dq and g * d(score)/dx to dx.
  void PairBackward(const float* q, const float* x, float g, float* dq, float* dx) const;

  // scores [n, m] = score of every query row of q [n, dim] against every
  // candidate row of x [m, dim]; rows may be views with a leading stride.
  // `qnorm` [n] / `xnorm` [m]: scratch for TransE's squared norms.
  Status Scores(const ExecContext& ctx, const Tensor& q, const Tensor& x, Tensor* scores) const;
  // From dscores [n, m]: adds d/dq to dq [n, dim] and writes d/dx to dx
  // [m, dim] (overwritten). `scores` are Scores' output (TransE needs the
  // distances). dscores may be modified (TransE rescales it in place).
  Status ScoresBackward(const ExecContext& ctx, const Tensor& q, const Tensor& x, const Tensor& scores,
                        Tensor* dscores, Tensor* dq, Tensor* dx) const;

 private:
  LinkScorer(Kind kind, int64_t dim, float margin) : kind_(kind), dim_(dim), margin_(margin) {}
  Kind kind_;
  int64_t dim_;
  float margin_;
};

}  // namespace foresight::trainer::internal
