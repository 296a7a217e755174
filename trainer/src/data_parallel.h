// Data-parallel GNN training across the ranks of a communicator: which
// runs it supports, and the per-step exchange that makes N ranks take the
// step one rank would. Each rank's loss is the mean over its part of the
// global batch; scaling its gradients by its share of the batch's scored
// seeds before the sum gives the gradient of the global batch's mean loss
// (not a mean of the ranks' means, which would weight a short part as
// much as a full one). Private to the trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "foresight/autograd/tape.h"
#include "foresight/core/communicator.h"
#include "foresight/core/status.h"
#include "foresight/trainer/train_options.h"
#include "gradient_buckets.h"

namespace foresight::trainer::internal {

struct StepResult;

// The job's ranks and what their exchanges cost, shared by the runner's
// steps. One per Train call.
struct DataParallel {
  Communicator* comm = nullptr;
  // TrainOptions::allreduce_bucket: > 0 sums the gradients in buckets
  // during backward (BeforeBackward, StartGradientSums); 0 in one exchange
  // after it.
  int64_t bucket_bytes = 0;
  std::unique_ptr<GradientBuckets> buckets;  // made by the first bucketed step
  bool log = false;  // log the bucket plan (rank 0, progress on)
  double allreduce_seconds = 0;  // in the steps' exchanges, waiting for peers included
  int64_t allreduce_bytes = 0;   // gradient bytes each rank sent into the sums
  int64_t steps = 0;
};

// The ranks order partition splits its partitions between
// (TrainOptions::rank_partitions, 0 meaning the job's `ranks`); 1 when the
// order is not split.
int PartitionOwners(const TrainOptions& o, int ranks);

// OK when `o` trains a GNN in a way N > 1 ranks reproduce exactly; else
// Unimplemented naming the option and what to use.
Status CheckDataParallel(const TrainOptions& o, int ranks);

// Bucketed exchange only (else nothing): before this rank's backward of its
// part of the batch, turns *result (this rank's mean loss, correct and
// counted, known after forward) and `local_seeds` into the global batch's
// figures (result->seeds too) and arms the gradient-ready hooks of
// `params` (the same list every step) with this rank's share of the batch.
Status BeforeBackward(DataParallel* dp, const std::vector<autograd::Parameter*>& params, int64_t local_seeds,
                      StepResult* result);

// Bucketed exchange only (else nothing): starts the sums of the buckets
// backward has not started. Collective: a step with another collective
// between backward and AllReduceStep calls this before it, so every rank
// starts the buckets in the same place whether or not it ran backward.
Status StartGradientSums(DataParallel* dp);

// After this rank's backward of its part of the batch: sums the ranks'
// scaled gradients of `params` (every rank then holds the same ones). The
// one-exchange path also turns *result and `local_seeds` into the global
// batch's figures, as BeforeBackward does for the bucketed one.
Status AllReduceStep(DataParallel* dp, const std::vector<autograd::Parameter*>& params, int64_t local_seeds,
                     StepResult* result);

// Collective: OK when every rank's `mine` is; else this rank's own error,
// or Aborted naming the first rank that failed at `what` (its own log says
// why). So a step that may fail on some ranks ends on all of them instead of
// leaving the others waiting in the next collective.
Status AllRanksOk(Communicator* comm, const Status& mine, const std::string& what);

}  // namespace foresight::trainer::internal
