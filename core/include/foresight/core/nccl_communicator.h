// The NCCL backend of Communicator (issue 16): collectives on the tensors of
// one GPU per rank, carried by NCCL, with the host communicator (MPI, or
// the single process) as the bootstrap: rank 0 makes the ncclUniqueId and
// the host communicator broadcasts it. NCCL itself (libnccl.so.2) is opened
// with dlopen when the first one is made, so a CPU run never maps it.
//
// Every collective takes device pointers and tensors on the communicator's
// GPU (tensor_device()), runs on the comm stream slot (kCommSlot) after the
// work already queued on the compute slot, and returns once it is complete
// on the GPU, so its result can be read by anything queued after. NCCL has
// no all-to-all-v or barrier: AllToAllV is grouped ncclSend / ncclRecv (the
// row counts go over the host communicator first), Barrier a one-element
// all-reduce.
//
// Deadlines as the MPI backend's: NCCL runs non-blocking, and a rank polls
// the completion and ncclCommGetAsyncError; at the deadline it aborts the
// NCCL communicator (ncclCommAbort) and, over MPI, asks the other ranks
// which collective they are in, names the missing ones and ends the job.
// An asynchronous NCCL error (a broken connection) aborts the NCCL
// communicator and is returned; every later collective refuses with it.
#pragma once

#include <memory>

#include "foresight/core/communicator.h"
#include "foresight/core/device.h"
#include "foresight/core/status.h"

namespace foresight {

// A new NCCL communicator over the ranks of `host` (collective on `host`:
// every rank calls it, each with its own GPU), this rank on GPU `device`.
// `host` must outlive it. Unimplemented in a build without CUDA;
// FailedPrecondition when no GPU is visible (the reason) or NCCL cannot be
// loaded (the library and the loader's reason).
StatusOr<std::unique_ptr<Communicator>> MakeNcclCommunicator(Communicator* host, Device device,
                                                             const CommunicatorOptions& options = {});

// The communicator for tensors on `device`: `world` itself for the host (or
// when `world` already lives on `device`); for a GPU, the NCCL communicator
// over world's ranks, made on the first call (collective on `world` then)
// and kept for the process's life (never destroyed: at exit the CUDA
// runtime may already be gone). FORESIGHT_COLLECTIVE_TIMEOUT applies as it
// does to the world. A CPU device never touches CUDA or NCCL.
StatusOr<Communicator*> CommunicatorFor(Device device, Communicator* world);

}  // namespace foresight
