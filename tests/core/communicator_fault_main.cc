// A job with one faulty rank, for the tests that a rank which dies or
// hangs ends the whole job with a message naming it (tests/core/
// CMakeLists.txt runs it under mpirun and matches the message):
//
//   communicator_fault_main hang R   rank R sleeps instead of the barrier
//   communicator_fault_main kill R   rank R SIGKILLs itself first
//
// The other ranks enter a barrier. Exits 0 only if the barrier completed,
// which must not happen.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "foresight/core/communicator.h"

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "hang") != 0 && std::strcmp(argv[1], "kill") != 0)) {
    std::fprintf(stderr, "usage: %s hang|kill RANK\n", argv[0]);
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
  if (c->rank() == faulty) {
    if (std::strcmp(argv[1], "kill") == 0) raise(SIGKILL);
    for (;;) pause();  // hung outside any collective
  }
  const foresight::Status s = c->Barrier();
  std::fprintf(stderr, "rank %d: barrier returned %s\n", c->rank(), s.ToString().c_str());
  return 0;
}
