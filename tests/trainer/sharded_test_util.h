// Helpers of the tests that train on several ranks and compare with one
// rank (dlrm_sharded_test.cc, link_sharded_test.cc): a run's per-step
// losses, summary and status, and a directory every rank sees.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/communicator.h"
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

}  // namespace foresight::trainer
