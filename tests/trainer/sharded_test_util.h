// Helpers of the tests that train on several ranks and compare with one
// rank (dlrm_sharded_test.cc, link_sharded_test.cc): a run's per-step
// losses, summary and status, and a directory every rank sees.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/communicator.h"
#include "foresight/storage/npy.h"
#include "foresight/trainer/trainer.h"
#include "testing/testing.h"

namespace foresight::trainer {

struct TrainedRun {
  std::vector<double> losses;
  TrainSummary summary;
  Status status;
};

inline TrainedRun TrainOn(const TrainOptions& o, Communicator* comm) {
  TrainedRun run;
  TrainCallbacks callbacks;
  callbacks.on_batch = [&](int, int64_t, int64_t, double loss) { run.losses.push_back(loss); };
  run.status = trainer::Train(o, callbacks, comm, &run.summary);
  return run;
}

// A directory every rank of `comm` sees: rank 0's temporary one.
class SharedDir {
 public:
  explicit SharedDir(Communicator* comm) : comm_(comm) {
    Tensor name = Tensor::Zeros({512}, DType::kU8);
    if (comm->rank() == 0) {
      own_ = std::make_unique<testing::TempDir>();
      std::memcpy(name.raw_data(), own_->path().data(), own_->path().size());
    }
    EXPECT_OK(comm->Broadcast(&name, 0));
    path_ = reinterpret_cast<const char*>(name.raw_data());
  }
  ~SharedDir() { EXPECT_OK(comm_->Barrier()); }  // every rank is done with it before rank 0 removes it
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  Communicator* comm_;
  std::unique_ptr<testing::TempDir> own_;
  std::string path_;
};

// The .npy file `name` exported from several ranks' shards
// (full_dir/name) holds what the one-rank run exported (single_dir/name):
// the same shape and dtype, f32 values within `tolerance` (the largest
// difference is printed), other dtypes byte for byte.
inline void ExpectExportedLikeOneRank(const std::string& single_dir, const std::string& full_dir,
                                      const std::string& name, double tolerance, int ranks) {
  ASSERT_OK_AND_ASSIGN(Tensor a, storage::LoadNpy(single_dir + "/" + name));
  ASSERT_OK_AND_ASSIGN(Tensor b, storage::LoadNpy(full_dir + "/" + name));
  ASSERT_EQ(ShapeToString(a.shape()), ShapeToString(b.shape())) << name;
  ASSERT_EQ(a.dtype(), b.dtype()) << name;
  if (a.dtype() != DType::kF32) {
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0) << name;
    return;
  }
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    worst = std::max(worst, static_cast<double>(std::abs(a.data<float>()[i] - b.data<float>()[i])));
  }
  EXPECT_LE(worst, tolerance) << name << " exported from " << ranks << " ranks' shards";
  std::printf("%s from %d ranks' shards: largest difference from one rank's %.3g\n", name.c_str(), ranks, worst);
}

// Per-rank checkpoint shards, as both sharded tests check them: `o` (its
// checkpoint_dir unset, its epochs those of `full`, the uninterrupted run
// on `world`) trained for `first_epochs` with checkpoints in
// shared/"resumed", then resumed to o.epochs: the resumed steps are full's
// bit for bit, and same_result(resumed summary, full summary) checks the
// metrics. On several ranks, a resume on one process is refused naming the
// rank count (and the mpirun to use), and a one-rank checkpoint is refused
// on the ranks.
template <typename SameResult>
void ExpectShardsResumeOnTheSameRanks(TrainOptions o, const TrainedRun& full, int first_epochs, Communicator* world,
                                      const SharedDir& shared, SameResult same_result) {
  const int ranks = world->size(), epochs = o.epochs;
  o.checkpoint_dir = shared.File("resumed");
  o.epochs = first_epochs;
  const TrainedRun first = TrainOn(o, world);
  ASSERT_OK(first.status);
  o.epochs = epochs;
  o.resume = true;
  const TrainedRun second = TrainOn(o, world);
  ASSERT_OK(second.status);
  ASSERT_EQ(first.losses.size() + second.losses.size(), full.losses.size());
  for (size_t i = 0; i < second.losses.size(); ++i) {
    EXPECT_EQ(second.losses[i], full.losses[first.losses.size() + i]) << "step " << first.losses.size() + i;
  }
  same_result(second.summary, full.summary);

  if (ranks == 1) return;
  // Another rank count: refused, naming the count it was written by.
  if (world->rank() == 0) {
    o.epochs = epochs + 1;
    std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
    const Status other = TrainOn(o, single.get()).status;
    EXPECT_ERROR_CONTAINS(other, "written by " + std::to_string(ranks) + " ranks");
    EXPECT_ERROR_CONTAINS(other, "mpirun -np " + std::to_string(ranks));
  }
  ASSERT_OK(world->Barrier());
  // A one-rank checkpoint is refused on several ranks.
  o.checkpoint_dir = shared.File("one");
  o.epochs = 1;
  o.resume = false;
  if (world->rank() == 0) {
    std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
    ASSERT_OK(TrainOn(o, single.get()).status);
  }
  ASSERT_OK(world->Barrier());
  o.epochs = 2;
  o.resume = true;
  EXPECT_ERROR_CONTAINS(TrainOn(o, world).status, "written by 1 rank");
}

}  // namespace foresight::trainer
