// The advisory lock that gives one training at a time a checkpoint
// directory: <dir>/lock, flock(2)-ed for the whole run and holding the
// owner's pid so a refused second run can name it. Private to the trainer.
#pragma once

#include <memory>
#include <string>

#include "foresight/core/communicator.h"
#include "foresight/core/status.h"

namespace foresight::trainer::internal {

inline constexpr char kLockFile[] = "lock";

class CheckpointDirLock {
 public:
  // Creates `dir` (and parents) when missing and takes its lock without
  // waiting. A directory locked by another run (another process, or another
  // Train call of this one) is FailedPrecondition naming the directory and
  // the holder's pid.
  static StatusOr<std::unique_ptr<CheckpointDirLock>> Acquire(const std::string& dir);
  // Removes the lock file, releases the lock, and removes the directory
  // when this lock created it and nothing else was put in it (a run that
  // failed before its first checkpoint leaves no trace).
  ~CheckpointDirLock();
  CheckpointDirLock(const CheckpointDirLock&) = delete;
  CheckpointDirLock& operator=(const CheckpointDirLock&) = delete;

 private:
  CheckpointDirLock(std::string dir, int fd, bool created_dir)
      : dir_(std::move(dir)), fd_(fd), created_dir_(created_dir) {}
  std::string dir_;
  int fd_;
  bool created_dir_;
};

// Gives `dir` to a run on the ranks of `comm` (nullptr: this process
// alone) until *lock is destroyed: the writer (rank 0, which holds it for
// all) acquires the lock into *lock, then removes what killed runs left
// half written in it with remove_leftovers(dir). Collective: every rank
// learns whether that worked, so they fail together, and the others read
// the checkpoint only once the writer has cleaned up.
Status OpenCheckpointDir(const std::string& dir, bool writer, Communicator* comm,
                         Status (*remove_leftovers)(const std::string&), std::unique_ptr<CheckpointDirLock>* lock);

}  // namespace foresight::trainer::internal
