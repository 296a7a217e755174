// Gradient all-reduce in buckets, overlapped with backward (issue 16): the
// parameters' f32 gradients are packed, scaled by this rank's share of the
// batch, into buckets of about `bucket_bytes`, and each bucket's sum is
// started (non-blocking) from the parameters' gradient-ready hooks as soon
// as its last gradient is final, while backward goes on with the earlier
// layers. Private to the trainer.
//
// The buckets depend only on the parameters' order and sizes, so every
// rank has the same ones and starts their sums in the same order (MPI
// requires it) whatever the timing: buckets are filled in reverse parameter
// order (backward finishes the last layers first) and bucket k is started
// only after buckets 0..k-1. A parameter bigger than a bucket gets one of
// its own.
//
// Reverse parameter order is only a guess at the order backward finishes
// the gradients (GraphSAGE's is 5,3,4,2,0,1, not 5,4,3,2,1,0), and a bucket
// waiting for a late parameter holds back every bucket after it. So, as
// PyTorch DDP does, the first step records the order the hooks fire in
// (used on rank 0 only), and LearnOrder after it broadcasts rank 0's order
// and re-plans the buckets from it, the same on every rank. It happens once:
// the plan never follows timing afterwards, so a run stays deterministic. Each bucket also sums, per parameter, how many ranks had a
// gradient, so a parameter no rank reached keeps no gradient (the
// optimizer skips it), as in the one-exchange path.
//
// Thread safety: one thread (the one running Backward and the
// communicator's collectives).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "foresight/autograd/tape.h"
#include "foresight/core/communicator.h"
#include "foresight/core/status.h"

namespace foresight::trainer::internal {

class GradientBuckets {
 public:
  // `params` (not owned) outlive this object; bucket_bytes > 0.
  GradientBuckets(Communicator* comm, std::vector<autograd::Parameter*> params, int64_t bucket_bytes);
  // Waits for any sum still outstanding (an error path) and removes the
  // hooks, so MPI never writes into freed buckets.
  ~GradientBuckets();
  GradientBuckets(const GradientBuckets&) = delete;
  GradientBuckets& operator=(const GradientBuckets&) = delete;

  // Before backward: arms the hooks for one step, with `scale` (this rank's
  // share of the batch) applied to every gradient as it is packed.
  void Arm(float scale);
  // After backward (or instead of it, on a rank with nothing to backward):
  // packs the gradients whose hooks did not fire and starts every bucket
  // not started yet. Call before any other collective of the step.
  Status StartRest();
  // Waits for every bucket and writes the sums into the parameters'
  // gradients; disarms the hooks. Returns the first error of the step.
  Status Finish();

  // Collective, once, after the first step's Finish (every rank): rank 0's
  // recorded gradient-ready order goes to every rank, which re-plans from
  // it (Replan). A later call does nothing.
  Status LearnOrder();
  // Re-plans the buckets (not armed) to fill in `ready` order: the
  // parameters (indices into `params`, each at most once) in the order
  // their gradients became ready, then those missing from it in their
  // planned places (reverse parameter order). InvalidArgument otherwise.
  Status Replan(const std::vector<int>& ready);
  // LearnOrder has run.
  bool learned() const { return learned_; }
  // The hooks' order of the first armed step on this rank (indices into
  // `params`; only parameters whose hooks fired).
  const std::vector<int>& recorded_order() const { return recorded_; }
  // The parameters in the order the buckets are filled (bucket 0 first).
  const std::vector<int>& fill_order() const { return fill_order_; }

  int buckets() const { return static_cast<int>(buckets_.size()); }
  // Buckets whose sums are started this step (from the hooks, or StartRest).
  int started() const { return next_start_; }
  // Gradient bytes (f32) this rank sends per step, flags excluded.
  int64_t gradient_bytes() const { return gradient_bytes_; }
  // Seconds spent inside the hooks this step (packing, starting, progress).
  double hook_seconds() const { return hook_seconds_; }
  // The bucket each parameter (by index in `params`) is in.
  const std::vector<int>& bucket_of() const { return bucket_of_; }

 private:
  struct Bucket {
    std::vector<int> params;    // indices into params_, in packing order
    std::vector<int64_t> at;    // each one's offset in data
    int64_t values = 0;         // gradient values; then one flag per param
    std::vector<float> data;    // values + params.size()
    int remaining = 0;          // params not yet packed this step
    Communicator::Pending pending;
    bool started = false;
  };

  // Fills the buckets in `order` (every parameter index exactly once).
  void Plan(const std::vector<int>& order);
  void OnReady(int index);
  void Pack(int index);
  void StartReady();

  Communicator* comm_;
  std::vector<autograd::Parameter*> params_;
  std::vector<Bucket> buckets_;
  int64_t bucket_values_;
  std::vector<int> bucket_of_;
  std::vector<int> fill_order_;
  std::vector<int> recorded_;
  bool recording_ = false;  // the first armed step
  bool recorded_once_ = false;
  bool learned_ = false;
  std::vector<char> packed_;
  int64_t gradient_bytes_ = 0;
  float scale_ = 1.0f;
  int next_start_ = 0;  // buckets before it are started
  bool armed_ = false;
  double hook_seconds_ = 0;
  Status error_;
};

}  // namespace foresight::trainer::internal
