// GNN training on several ranks whose checkpoint directory rank 0 cannot
// take: under `mpirun -np 2` (tests/trainer/CMakeLists.txt) every rank's
// Train must return an error naming the directory (rank 0 why, the others
// that rank 0 failed), not leave the other ranks waiting for rank 0 in a
// collective. A hang is caught by a watchdog that ends the process (and so
// the mpirun job) with a message, before ctest's own timeout. Run as one
// process (the discovered test), rank 0's refusal alone is checked.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "checkpoint_lock.h"
#include "foresight/core/communicator.h"
#include "foresight/trainer/trainer.h"
#include "sharded_test_util.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

// Ends the process with status 3 unless destroyed within `seconds`: a
// rank that waits forever for one that has already gone on.
class HangWatchdog {
 public:
  HangWatchdog(int rank, int seconds) {
    thread_ = std::thread([this, rank, seconds] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) {
        std::fprintf(stderr, "rank %d: test still running after %d s: the ranks hang on the checkpoint directory\n",
                     rank, seconds);
        std::fflush(stderr);
        std::_Exit(3);
      }
    });
  }
  ~HangWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

int WorldRank() {
  StatusOr<Communicator*> world = WorldCommunicator();
  return world.ok() ? (*world)->rank() : -1;
}

class CheckpointLockRanksTest : public testing::SyntheticDatasetTest<> {
 protected:
  // Trains sage with checkpoints in `ckpt` on every rank; each rank's
  // error must name `ckpt`, rank 0's contain `why`.
  void ExpectEveryRankRefused(Communicator* world, const std::string& ckpt, const std::string& why) {
    TrainOptions o = testing::SmallOptions(dir_.File("data"), "sage", /*full_graph=*/false);
    o.checkpoint_dir = ckpt;
    TrainSummary summary;
    const Status s = Train(o, TrainCallbacks(), world, &summary);
    ASSERT_FALSE(s.ok()) << "rank " << world->rank() << " trained on a checkpoint directory rank 0 could not take";
    EXPECT_NE(s.message().find(ckpt), std::string::npos) << s.ToString();
    if (world->rank() == 0) {
      EXPECT_ERROR_CONTAINS(s, why);
    } else {
      EXPECT_ERROR_CONTAINS(s, "opening the checkpoint directory " + ckpt + ": rank 0 failed");
    }
  }

 private:
  // Over the whole test, the collectives after Train included: a rank
  // left waiting in Train falls out of step with the others' later calls.
  HangWatchdog watchdog_{WorldRank(), 60};
};

TEST_F(CheckpointLockRanksTest, EveryRankFailsWhenAnotherRunHoldsTheDirectory) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  SharedDir shared(*world);
  const std::string ckpt = shared.File("held");
  // Another holder: a lock of this process is refused like another run's
  // (flock locks belong to the open file).
  std::unique_ptr<internal::CheckpointDirLock> other;
  if ((*world)->rank() == 0) {
    StatusOr<std::unique_ptr<internal::CheckpointDirLock>> held = internal::CheckpointDirLock::Acquire(ckpt);
    ASSERT_OK(held.status());
    other = std::move(held).value();
  }
  ExpectEveryRankRefused(*world, ckpt, "checkpoint directory " + ckpt + " is in use by another training");
}

TEST_F(CheckpointLockRanksTest, EveryRankFailsWhenTheDirectoryIsAFile) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  SharedDir shared(*world);
  const std::string ckpt = shared.File("plain_file");
  if ((*world)->rank() == 0) std::ofstream(ckpt) << "not a directory\n";
  ExpectEveryRankRefused(*world, ckpt, "create checkpoint directory " + ckpt + ": Not a directory");
}

}  // namespace
}  // namespace foresight::trainer
