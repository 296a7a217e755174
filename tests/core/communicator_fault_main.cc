// A job with one faulty rank, for the tests that a rank which dies or
// hangs ends the whole job with a message naming it (tests/core/
// CMakeLists.txt runs it under mpirun and matches the message):
//
//   communicator_fault_main hang R   rank R sleeps instead of the barrier
//   communicator_fault_main kill R   rank R SIGKILLs itself first
//   communicator_fault_main hang-started R
//                                    rank R starts the first of two
//                                    non-blocking sums, then sleeps
//
// The other ranks enter a barrier (hang-started: start two sums and wait
// for them). Exits 0 only if that completed, which must not happen.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "foresight/core/communicator.h"

int main(int argc, char** argv) {
  const bool started = argc == 3 && std::strcmp(argv[1], "hang-started") == 0;
  if (argc != 3 || (std::strcmp(argv[1], "hang") != 0 && std::strcmp(argv[1], "kill") != 0 && !started)) {
    std::fprintf(stderr, "usage: %s hang|kill|hang-started RANK\n", argv[0]);
    return 2;
  }
  const int faulty = std::atoi(argv[2]);
  foresight::StatusOr<foresight::Communicator*> world = foresight::WorldCommunicator();
  if (!world.ok()) {
    std::fprintf(stderr, "%s\n", world.status().ToString().c_str());
    return 2;
  }
  foresight::Communicator* c = *world;
  if (!c->Barrier().ok()) return 2;  // everyone is up
  if (started) {
    float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    foresight::Communicator::Pending pa, pb;
    if (!c->StartAllReduceSum(a, 4, foresight::Communicator::SumType::kF32, &pa).ok()) return 2;
    if (c->rank() == faulty) {
      for (;;) pause();  // hung outside any collective, one sum started
    }
    if (!c->StartAllReduceSum(b, 4, foresight::Communicator::SumType::kF32, &pb).ok()) return 2;
    const foresight::Status sa = c->Wait(&pa);
    const foresight::Status sb = c->Wait(&pb);
    std::fprintf(stderr, "rank %d: started sums returned %s, %s\n", c->rank(), sa.ToString().c_str(),
                 sb.ToString().c_str());
    return 0;
  }
  if (c->rank() == faulty) {
    if (std::strcmp(argv[1], "kill") == 0) raise(SIGKILL);
    for (;;) pause();  // hung outside any collective
  }
  const foresight::Status s = c->Barrier();
  std::fprintf(stderr, "rank %d: barrier returned %s\n", c->rank(), s.ToString().c_str());
  return 0;
}
