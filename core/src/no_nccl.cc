// The NCCL backend in a build without CUDA: refused with what to do.
#include "foresight/core/nccl_communicator.h"

namespace foresight {

StatusOr<std::unique_ptr<Communicator>> MakeNcclCommunicator(Communicator*, Device device,
                                                             const CommunicatorOptions&) {
  return Unimplemented("collectives on " + device.ToString() +
                       " need the NCCL communicator, which this foresight build lacks: it has no CUDA (rebuild with "
                       "-DFORESIGHT_CUDA=ON where nvcc is installed)");
}

}  // namespace foresight
