// The who-is-missing question of a host backend (MPI), lent to a device
// backend bootstrapped on it (NCCL), so a collective that does not complete
// on the GPU names the missing ranks the way a host collective does. Both
// backends number their collectives with the one counter below: every rank
// calls the same collectives of both in the same order, so the same
// collective has the same number on every rank, whichever backend carries
// it. Private to core.
#pragma once

#include <cstdint>

namespace foresight {
class Communicator;
}

namespace foresight::internal {

class HangWatch {
 public:
  virtual ~HangWatch() = default;
  // Enters the next collective: returns its job-wide number.
  virtual int64_t EnterCollective() = 0;
  // Answers the questions other ranks have sent (call it while polling a
  // collective, so a rank waiting on the GPU still answers).
  virtual void AnswerQuestions() = 0;
  // At the deadline of collective #`number` (`what`), after `waited_seconds`:
  // asks every other rank which collective it is in, names those that do
  // not answer or are elsewhere, and ends the job. Does not return.
  [[noreturn]] virtual void TimedOut(int64_t number, const char* what, double waited_seconds) = 0;
};

// The hang watch of `host` (the MPI backend), or null when it has none (the
// single-process communicator: there is no other rank to ask).
HangWatch* HangWatchOf(Communicator* host);

}  // namespace foresight::internal
