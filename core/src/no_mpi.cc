// The MPI entry points of a build without MPI (FORESIGHT_MPI off or no
// MPI library found).
#include "foresight/core/communicator.h"

namespace foresight {

bool HaveMpi() { return false; }

namespace internal {

StatusOr<std::unique_ptr<Communicator>> MakeMpiWorld(const CommunicatorOptions&) {
  return FailedPrecondition(
      "this process was started by mpirun (OMPI_COMM_WORLD_SIZE is set), but this foresight build has no MPI "
      "backend, so each rank would train alone: rebuild with -DFORESIGHT_MPI=ON where libopenmpi-dev is installed, "
      "or run without mpirun");
}

}  // namespace internal
}  // namespace foresight
