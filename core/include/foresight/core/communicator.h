// Collectives between the ranks of a multi-process job (issue 16): the one
// interface the trainer uses to split batches and combine gradients. Host
// backends: a single process (size 1, every collective the identity) and
// MPI (Open MPI starts the ranks and carries the bytes; foresight adds no
// network protocol of its own). Device backend: NCCL, one GPU per rank,
// bootstrapped through the host backend (nccl_communicator.h). Tensors and
// data are contiguous and live where tensor_device() says: host memory for
// the host backends, the rank's GPU for NCCL.
//
// Every collective is called by every rank in the same order with agreeing
// arguments (dtype, element counts, root), as MPI requires. A rank that
// does not arrive within the timeout ends the whole job: the waiting ranks
// name the ranks that did not answer and abort (never a silent hang).
//
// Thread safety: one thread at a time per communicator.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/device.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "single", "mpi" or "nccl".
  virtual const char* backend() const = 0;
  // Where the data of every collective lives: the host, or (NCCL) the GPU
  // this rank's communicator was made for.
  virtual Device tensor_device() const { return Device::Cpu(); }

  // Element types AllReduceSum adds.
  enum class SumType { kF32, kF64, kI64 };

  // In place: every rank's `n` elements at `data` (on tensor_device(); the
  // same n and type on every rank) become their elementwise sum over the ranks,
  // the same bytes on every rank. By default StartAllReduceSum, then Wait.
  virtual Status AllReduceSum(void* data, int64_t n, SumType type);
  Status AllReduceSum(float* data, int64_t n) { return AllReduceSum(data, n, SumType::kF32); }
  Status AllReduceSum(double* data, int64_t n) { return AllReduceSum(data, n, SumType::kF64); }
  Status AllReduceSum(int64_t* data, int64_t n) { return AllReduceSum(data, n, SumType::kI64); }
  // The same on a tensor (f32 or i64, contiguous, on tensor_device()).
  Status AllReduceSum(Tensor* data);

  // `send` (any dtype, the same shape on every rank) from each rank,
  // concatenated in rank order along dim 0 into *out (allocated here:
  // [size() * send.size(0), ...]). A 0-D `send` counts as one element.
  virtual Status AllGather(const Tensor& send, Tensor* out) = 0;

  // A non-blocking all-reduce, started by StartAllReduceSum and finished by
  // Wait. Move-only; Wait it exactly once (a handle not waited for leaves
  // MPI writing into `data` after the caller may have freed it).
  class Pending {
   public:
    Pending() = default;
    explicit Pending(int64_t id) : id_(id) {}
    Pending(Pending&& o) noexcept : id_(o.id_) { o.id_ = -1; }
    Pending& operator=(Pending&& o) noexcept {
      id_ = o.id_;
      o.id_ = -1;
      return *this;
    }
    Pending(const Pending&) = delete;
    Pending& operator=(const Pending&) = delete;
    bool valid() const { return id_ >= 0; }
    int64_t id() const { return id_; }

   private:
    int64_t id_ = -1;
  };

  // Starts the in-place sum AllReduceSum makes and returns at once; `data`
  // must stay put and untouched until Wait(*pending) returns. Several may
  // be outstanding; every rank starts them in the same order. Counts as one
  // collective for the timeout's who-is-missing question.
  virtual Status StartAllReduceSum(void* data, int64_t n, SumType type, Pending* pending) = 0;
  // Until the started sum is complete, under the same deadline (counted
  // from this call) and naming of missing ranks as a blocking collective.
  // Invalidates *pending.
  virtual Status Wait(Pending* pending) = 0;
  // Moves outstanding started sums along without blocking (MPI progresses
  // a non-blocking collective only inside MPI calls) and answers other
  // ranks' who-is-missing questions. Cheap; call it between pieces of work.
  virtual Status Progress() = 0;

  // Personalised exchange of rows: `send` holds size() consecutive parts
  // along dim 0, part r (send_counts[r] rows, possibly 0) for rank r.
  // *out (allocated here) receives the parts addressed to this rank in
  // rank order; recv_counts[r] says how many rows came from rank r. Every
  // rank's `send` has the same dtype and row shape (dims after the first).
  virtual Status AllToAllV(const Tensor& send, const std::vector<int64_t>& send_counts, Tensor* out,
                           std::vector<int64_t>* recv_counts) = 0;

  // Equal parts: send.size(0) / size() rows to each rank (the row count
  // must divide evenly).
  Status AllToAll(const Tensor& send, Tensor* out);

  // In place: every rank's `data` becomes rank `root`'s (same dtype and
  // numel on every rank).
  virtual Status Broadcast(Tensor* data, int root) = 0;

  virtual Status Barrier() = 0;

  // Ends every rank of the job now with exit code `code`, after writing
  // `message` (this rank's reason) to stderr. For errors one rank cannot
  // report through a collective (the others would wait for it). Does not
  // return.
  [[noreturn]] virtual void Abort(const std::string& message, int code) = 0;
};

// The communicator of a single process: rank 0 of 1.
std::unique_ptr<Communicator> MakeSingleProcessCommunicator();

// Options of the job's communicator.
struct CommunicatorOptions {
  // Seconds a rank waits in one collective before it asks the others who
  // is missing and aborts the job naming them. Default: 60 (the
  // FORESIGHT_COLLECTIVE_TIMEOUT environment variable overrides it).
  double timeout_seconds = 60;
  // Seconds the waiting ranks give the others to answer that question
  // before naming those that did not. Default: 5.
  double answer_seconds = 5;
};

// The job's world communicator, made once per process (later calls return
// the same object; `options` of the first call apply). Under mpirun
// (Open MPI's OMPI_COMM_WORLD_SIZE in the environment) and in a build with
// MPI: the MPI world, MPI initialised here and finalised at exit. Started
// without a launcher: the single-process communicator. Under mpirun in a
// build without MPI: FailedPrecondition (N copies of one rank would each
// train alone).
StatusOr<Communicator*> WorldCommunicator(const CommunicatorOptions& options = CommunicatorOptions());

// True when this build has the MPI backend (FORESIGHT_MPI).
bool HaveMpi();

// The launcher's world size from the environment (1 when not launched by
// mpirun): what the CLI reads before the world is made.
int LaunchedWorldSize();

}  // namespace foresight
