#include "data_parallel.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "epoch_runner.h"
#include "foresight/core/logging.h"
#include "foresight/core/stopwatch.h"

namespace foresight::trainer::internal {

int PartitionOwners(const TrainOptions& o, int ranks) {
  if (o.order != "partition") return 1;
  return std::max(1, o.rank_partitions > 0 ? o.rank_partitions : ranks);
}

Status CheckDataParallel(const TrainOptions& o, int ranks) {
  if (ranks <= 1) return Status::OK();
  const std::string prefix = "training on " + std::to_string(ranks) + " ranks: ";
  if (o.rank_partitions != 0 && o.rank_partitions != ranks) {
    return InvalidArgument(prefix + "rank_partitions " + std::to_string(o.rank_partitions) +
                           " splits the partitions between another number of ranks; leave it out (0: these " +
                           std::to_string(ranks) + ")");
  }
  if (o.full_graph) {
    return Unimplemented(prefix + "full_graph takes one step over the whole graph; data-parallel training splits "
                                  "mini-batches (leave out --full-graph)");
  }
  if (o.node_features != "file" && o.node_features != "degree") {
    return Unimplemented(prefix + "node_features " + o.node_features +
                         " trains an input table that is not yet shared between ranks; use file or degree");
  }
  if (o.sampling == "resident") {
    return Unimplemented(prefix + "sampling resident restricts a batch to one resident set, but each rank's part "
                                  "of it has its own partitions; use --sampling full");
  }
  return Status::OK();
}

namespace {

// Sums the batch's figures over the ranks into *result (and `extra`, summed
// alongside); returns this rank's share of the batch's scored seeds, the
// scale of its gradients.
StatusOr<float> SumBatchFigures(Communicator& comm, int64_t local_seeds, StepResult* result,
                                std::vector<double>* extra) {
  const size_t kFixed = 4;
  std::vector<double> stats(kFixed + extra->size());
  stats[0] = result->loss * static_cast<double>(result->counted);
  stats[1] = static_cast<double>(result->correct);
  stats[2] = static_cast<double>(result->counted);
  stats[3] = static_cast<double>(local_seeds);
  std::copy(extra->begin(), extra->end(), stats.begin() + kFixed);
  FS_RETURN_IF_ERROR(comm.AllReduceSum(stats.data(), static_cast<int64_t>(stats.size())));
  const double counted = stats[2];
  // This rank's gradients are of the mean over its `counted` scored seeds;
  // the global mean's are the sum of them weighted by counted / total.
  const float scale = counted > 0 ? static_cast<float>(static_cast<double>(result->counted) / counted) : 0.0f;
  result->loss = counted > 0 ? stats[0] / counted : 0.0;
  result->correct = static_cast<int64_t>(stats[1]);
  result->counted = static_cast<int64_t>(counted);
  result->seeds = static_cast<int64_t>(stats[3]);
  std::copy(stats.begin() + kFixed, stats.end(), extra->begin());
  return scale;
}

// After the first bucketed step: every rank re-plans its buckets from the
// order rank 0's gradients became ready in (GradientBuckets::LearnOrder).
Status LearnReadyOrder(DataParallel* dp) {
  GradientBuckets& b = *dp->buckets;
  FS_RETURN_IF_ERROR(b.LearnOrder());
  if (dp->log) {
    std::string order;
    for (int i : b.fill_order()) order += (order.empty() ? "" : ",") + std::to_string(i);
    FS_LOG(INFO) << "gradient buckets re-planned from the first step's gradient-ready order " << order << " ("
                 << b.recorded_order().size() << " reported by hooks): " << b.buckets() << " bucket(s)";
  }
  return Status::OK();
}

}  // namespace

Status BeforeBackward(DataParallel* dp, const std::vector<autograd::Parameter*>& params, int64_t local_seeds,
                      StepResult* result) {
  if (dp->bucket_bytes == 0) return Status::OK();
  Stopwatch watch;
  if (dp->buckets == nullptr) {
    dp->buckets = std::make_unique<GradientBuckets>(dp->comm, params, dp->bucket_bytes);
    if (dp->log) {
      FS_LOG(INFO) << "gradients summed in " << dp->buckets->buckets() << " bucket(s) of up to " << dp->bucket_bytes
                   << " bytes (" << dp->buckets->gradient_bytes() << " bytes of " << params.size()
                   << " parameters), started from backward's gradient-ready hooks";
    }
  }
  std::vector<double> none;
  FS_ASSIGN_OR_RETURN(const float scale, SumBatchFigures(*dp->comm, local_seeds, result, &none));
  dp->buckets->Arm(scale);
  dp->allreduce_seconds += watch.Lap();
  return Status::OK();
}

Status StartGradientSums(DataParallel* dp) {
  if (dp->bucket_bytes == 0) return Status::OK();
  Stopwatch watch;
  const Status s = dp->buckets->StartRest();
  dp->allreduce_seconds += watch.Lap();
  return s;
}

Status AllReduceStep(DataParallel* dp, const std::vector<autograd::Parameter*>& params, int64_t local_seeds,
                     StepResult* result) {
  Stopwatch watch;
  if (dp->bucket_bytes > 0) {
    if (dp->buckets == nullptr) return Internal("data parallel: AllReduceStep before BeforeBackward");
    FS_RETURN_IF_ERROR(dp->buckets->StartRest());
    FS_RETURN_IF_ERROR(dp->buckets->Finish());
    if (!dp->buckets->learned()) FS_RETURN_IF_ERROR(LearnReadyOrder(dp));
    dp->allreduce_seconds += watch.Lap() + dp->buckets->hook_seconds();
    dp->allreduce_bytes += dp->buckets->gradient_bytes();
    ++dp->steps;
    return Status::OK();
  }
  Communicator& comm = *dp->comm;
  // First the batch's figures, and which parameters have a gradient on
  // some rank (a rank whose part reached none still sends zeros for them).
  std::vector<double> has_grad(params.size());
  for (size_t i = 0; i < params.size(); ++i) has_grad[i] = params[i]->grad().defined() ? 1 : 0;
  FS_ASSIGN_OR_RETURN(const float scale, SumBatchFigures(comm, local_seeds, result, &has_grad));

  int64_t total = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (has_grad[i] > 0) total += params[i]->value().numel();
  }
  std::vector<float> flat(static_cast<size_t>(total), 0.0f);
  int64_t at = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (has_grad[i] == 0) continue;
    const autograd::Parameter& p = *params[i];
    const int64_t n = p.value().numel();
    if (p.grad().defined()) {
      if (!p.grad().is_contiguous() || p.grad().numel() != n) {
        return Internal("data parallel: the gradient of " + p.name() + " is " + p.grad().ToString());
      }
      const float* g = p.grad().data<float>();
      for (int64_t k = 0; k < n; ++k) flat[at + k] = g[k] * scale;
    }
    at += n;
  }
  FS_RETURN_IF_ERROR(comm.AllReduceSum(flat.data(), total));
  at = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (has_grad[i] == 0) continue;
    autograd::Parameter& p = *params[i];
    const int64_t n = p.value().numel();
    if (!p.grad().defined()) p.mutable_grad() = Tensor::Zeros(p.value().shape(), DType::kF32);
    std::memcpy(p.mutable_grad().data<float>(), flat.data() + at, static_cast<size_t>(n) * sizeof(float));
    at += n;
  }

  dp->allreduce_seconds += watch.Lap();
  dp->allreduce_bytes += total * static_cast<int64_t>(sizeof(float));
  ++dp->steps;
  return Status::OK();
}

Status AllRanksOk(Communicator* comm, const Status& mine, const std::string& what) {
  if (comm->size() == 1) return mine;
  std::vector<int64_t> failed(static_cast<size_t>(comm->size()), 0);
  failed[comm->rank()] = mine.ok() ? 0 : 1;
  FS_RETURN_IF_ERROR(comm->AllReduceSum(failed.data(), comm->size()));
  if (!mine.ok()) return mine;
  for (int r = 0; r < comm->size(); ++r) {
    if (failed[r] != 0) return Cancelled(what + ": rank " + std::to_string(r) + " failed (its log says why)");
  }
  return Status::OK();
}

}  // namespace foresight::trainer::internal
