// The NCCL backend of Communicator (nccl_communicator.h). NCCL runs
// non-blocking (ncclConfig_t::blocking = 0): every NCCL call returns at
// once, possibly with ncclInProgress, and this rank polls
// ncclCommGetAsyncError until the call has settled, then an event recorded
// after the collective on the comm stream until the GPU has done it. Both
// polls answer the host communicator's who-is-missing questions
// (hang_watch.h) and end at the deadline: a blocking NCCL communicator would
// wait forever inside ncclCommInitRank or ncclGroupEnd for a rank that never
// comes.
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "../communicator_checks.h"
#include "../hang_watch.h"
#include "foresight/core/cuda_available.h"
#include "foresight/core/cuda_streams.h"
#include "foresight/core/logging.h"
#include "foresight/core/nccl_communicator.h"
#include "nccl_library.h"

namespace foresight {

namespace internal {
namespace {

using Clock = std::chrono::steady_clock;

Status CudaFail(const char* call, cudaError_t err) {
  return Internal(std::string("NCCL communicator: ") + call + " failed: " + cudaGetErrorString(err));
}

#define FS_CUDA_CALL(call, name)                                \
  do {                                                          \
    const cudaError_t fs_cuda_rc_ = (call);                     \
    if (fs_cuda_rc_ != cudaSuccess) return CudaFail(name, fs_cuda_rc_); \
  } while (0)

ncclDataType_t NcclType(Communicator::SumType t) {
  switch (t) {
    case Communicator::SumType::kF32: return ncclFloat32;
    case Communicator::SumType::kF64: return ncclFloat64;
    case Communicator::SumType::kI64: return ncclInt64;
  }
  return ncclFloat32;
}

// A call of a non-blocking communicator that did not fail.
bool Accepted(ncclResult_t rc) { return rc == ncclSuccess || rc == ncclInProgress; }

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(const NcclLibrary* nccl, Communicator* host, Device device, const CommunicatorOptions& options)
      : nccl_(nccl), host_(host), watch_(HangWatchOf(host)), device_(device), options_(options) {}

  ~NcclCommunicator() override {
    for (auto& [id, started] : started_) cudaEventDestroy(started.done);
    if (before_ != nullptr) cudaEventDestroy(before_);
    if (comm_ == nullptr) return;
    cudaSetDevice(device_.index);
    // Finalize flushes the queued operations (non-blocking: poll it, but not
    // forever); Abort when that fails or takes longer than a collective may.
    ncclResult_t rc = nccl_->comm_finalize(comm_);
    const Clock::time_point deadline = Clock::now() + Seconds(options_.timeout_seconds);
    ncclResult_t state = rc;
    while (Accepted(rc)) {
      if (nccl_->comm_get_async_error(comm_, &state) != ncclSuccess || state != ncclInProgress) break;
      if (Clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (Accepted(rc) && state == ncclSuccess) {
      nccl_->comm_destroy(comm_);
    } else {
      nccl_->comm_abort(comm_);
    }
  }

  Status Init() {
    if (!device_.is_cuda()) return InvalidArgument("NCCL communicator: needs a cuda device, got " + device_.ToString());
    FS_CUDA_CALL(cudaSetDevice(device_.index), "cudaSetDevice");
    FS_ASSIGN_OR_RETURN(void* stream, CudaStreamFor(device_, kCommSlot));
    stream_ = static_cast<cudaStream_t>(stream);
    FS_CUDA_CALL(cudaEventCreateWithFlags(&before_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    FS_ASSIGN_OR_RETURN(scratch_, Tensor::EmptyOn(device_, {1}, DType::kF32));

    // Rank 0 makes the id; the host communicator broadcasts it with a last
    // byte that says whether rank 0 managed, so the others learn of its
    // failure instead of waiting for an id that never comes.
    ncclUniqueId id;
    std::memset(&id, 0, sizeof(id));
    Tensor wire = Tensor::Zeros({static_cast<int64_t>(sizeof(id)) + 1}, DType::kU8);
    Status made;
    if (host_->rank() == 0) {
      const ncclResult_t rc = nccl_->get_unique_id(&id);
      made = rc == ncclSuccess ? Status::OK() : NcclFail(rc, "ncclGetUniqueId");
      std::memcpy(wire.raw_data(), &id, sizeof(id));
      wire.data<uint8_t>()[sizeof(id)] = made.ok() ? 1 : 0;
    }
    FS_RETURN_IF_ERROR(host_->Broadcast(&wire, /*root=*/0));
    FS_RETURN_IF_ERROR(made);
    if (wire.data<uint8_t>()[sizeof(id)] != 1) {
      return FailedPrecondition("NCCL communicator: rank 0 could not make the NCCL unique id (its log says why)");
    }
    std::memcpy(&id, wire.raw_data(), sizeof(id));

    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const int64_t number = Enter();
    const ncclResult_t rc = nccl_->comm_init_rank_config(&comm_, host_->size(), id, host_->rank(), &config);
    if (!Accepted(rc)) {
      const Status s = NcclFail(rc, "ncclCommInitRankConfig");
      if (comm_ != nullptr) nccl_->comm_abort(comm_);
      comm_ = nullptr;
      return s;
    }
    return Settle(number, "NCCL communicator set-up", "ncclCommInitRankConfig", Clock::now());
  }

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  const char* backend() const override { return "nccl"; }
  Device tensor_device() const override { return device_; }

  Status StartAllReduceSum(void* data, int64_t n, SumType type, Pending* pending) override {
    FS_RETURN_IF_ERROR(CheckSpan(data, n, "AllReduceSum"));
    FS_RETURN_IF_ERROR(Usable());
    Started started;
    started.number = Enter();
    started.since = Clock::now();
    FS_RETURN_IF_ERROR(AfterCompute());
    // Zero elements: nothing for NCCL (the same n on every rank, so every
    // rank skips it), but a number and a handle like any other.
    if (n > 0) {
      FS_RETURN_IF_ERROR(Launched(nccl_->all_reduce(data, data, static_cast<size_t>(n), NcclType(type), ncclSum, comm_,
                                                    stream_),
                                  started.number, "all-reduce", "ncclAllReduce", started.since));
    }
    FS_CUDA_CALL(cudaEventCreateWithFlags(&started.done, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    const cudaError_t recorded = cudaEventRecord(started.done, stream_);
    if (recorded != cudaSuccess) {
      cudaEventDestroy(started.done);
      return CudaFail("cudaEventRecord", recorded);
    }
    const int64_t id = next_pending_++;
    started_.emplace(id, started);
    *pending = Pending(id);
    return Status::OK();
  }

  Status Wait(Pending* pending) override {
    auto it = pending->valid() ? started_.find(pending->id()) : started_.end();
    if (it == started_.end()) return InvalidArgument("Wait: the handle was not started or was already waited for");
    const Started started = it->second;
    started_.erase(it);
    *pending = Pending();
    // The deadline counts from Wait, as the MPI backend's does.
    const Status s = Complete(started.done, started.number, "all-reduce", Clock::now());
    cudaEventDestroy(started.done);
    return s;
  }

  Status Progress() override {
    // NCCL moves its operations along by itself (GPU kernels and its proxy
    // thread); only errors and the other ranks' questions need a look.
    if (watch_ != nullptr) watch_->AnswerQuestions();
    if (comm_ == nullptr) return Usable();
    ncclResult_t state = ncclSuccess;
    const ncclResult_t rc = nccl_->comm_get_async_error(comm_, &state);
    if (rc != ncclSuccess) return NcclFail(rc, "ncclCommGetAsyncError");
    if (state != ncclSuccess && state != ncclInProgress) return Broken(state, "a started all-reduce");
    return Status::OK();
  }

  Status AllGather(const Tensor& send, Tensor* out) override {
    FS_RETURN_IF_ERROR(CheckTensorOn(send, device_, "AllGather", "send"));
    FS_RETURN_IF_ERROR(Usable());
    Shape shape = RowShape(send);
    shape.insert(shape.begin(), RowsOf(send) * size());
    FS_ASSIGN_OR_RETURN(Tensor gathered, Tensor::EmptyOn(device_, shape, send.dtype()));
    const Clock::time_point since = Clock::now();
    const int64_t number = Enter();
    FS_RETURN_IF_ERROR(AfterCompute());
    if (send.nbytes() > 0) {
      FS_RETURN_IF_ERROR(Launched(nccl_->all_gather(send.raw_data(), gathered.raw_data(), send.nbytes(), ncclInt8,
                                                    comm_, stream_),
                                  number, "all-gather", "ncclAllGather", since));
    }
    FS_RETURN_IF_ERROR(Finish(number, "all-gather", since));
    *out = std::move(gathered);
    return Status::OK();
  }

  Status AllToAllV(const Tensor& send, const std::vector<int64_t>& send_counts, Tensor* out,
                   std::vector<int64_t>* recv_counts) override {
    FS_RETURN_IF_ERROR(CheckSendCounts(send, send_counts, size(), "AllToAllV", device_));
    FS_RETURN_IF_ERROR(Usable());
    // The row counts first, over the host communicator (they are host
    // numbers), so each rank can size what it receives.
    const int n = size();
    Tensor counts = Tensor::Empty({n}, DType::kI64);
    std::memcpy(counts.raw_data(), send_counts.data(), static_cast<size_t>(n) * sizeof(int64_t));
    Tensor counts_in;
    FS_RETURN_IF_ERROR(host_->AllToAll(counts, &counts_in));
    std::vector<int64_t> in(counts_in.data<int64_t>(), counts_in.data<int64_t>() + n);
    const Shape row_shape = RowShape(send);
    const int64_t row_bytes = ShapeNumel(row_shape) * static_cast<int64_t>(send.element_size());
    int64_t rows_in = 0;
    for (int r = 0; r < n; ++r) {
      if (in[r] < 0) return Internal("AllToAllV: rank " + std::to_string(r) + " sent a negative count");
      rows_in += in[r];
    }
    Shape shape = row_shape;
    shape.insert(shape.begin(), rows_in);
    FS_ASSIGN_OR_RETURN(Tensor received, Tensor::EmptyOn(device_, shape, send.dtype()));
    const Clock::time_point since = Clock::now();
    const int64_t number = Enter();
    FS_RETURN_IF_ERROR(AfterCompute());
    // NCCL matches sends and receives pair by pair, so a rank with nothing
    // to send or receive (its peers post nothing for it either) skips it.
    if (static_cast<int64_t>(send.nbytes()) + rows_in * row_bytes > 0) {
      const char* sbase = static_cast<const char*>(send.raw_data());
      char* rbase = static_cast<char*>(received.raw_data());
      ncclResult_t rc = nccl_->group_start();
      int64_t send_at = 0, recv_at = 0;
      for (int r = 0; r < n && Accepted(rc); ++r) {
        const int64_t sbytes = send_counts[r] * row_bytes, rbytes = in[r] * row_bytes;
        if (sbytes > 0) rc = nccl_->send(sbase + send_at, static_cast<size_t>(sbytes), ncclInt8, r, comm_, stream_);
        if (rbytes > 0 && Accepted(rc)) {
          rc = nccl_->recv(rbase + recv_at, static_cast<size_t>(rbytes), ncclInt8, r, comm_, stream_);
        }
        send_at += sbytes;
        recv_at += rbytes;
      }
      // The group is closed whatever happened inside it (NCCL requires it).
      const ncclResult_t end = nccl_->group_end();
      if (!Accepted(rc)) return Launched(rc, number, "all-to-all", "ncclSend/ncclRecv", since);
      FS_RETURN_IF_ERROR(Launched(end, number, "all-to-all", "ncclGroupEnd", since));
    }
    FS_RETURN_IF_ERROR(Finish(number, "all-to-all", since));
    *out = std::move(received);
    *recv_counts = std::move(in);
    return Status::OK();
  }

  Status Broadcast(Tensor* data, int root) override {
    FS_RETURN_IF_ERROR(CheckTensorOn(*data, device_, "Broadcast", "the tensor"));
    FS_RETURN_IF_ERROR(CheckRoot(root, size(), "Broadcast"));
    FS_RETURN_IF_ERROR(Usable());
    const Clock::time_point since = Clock::now();
    const int64_t number = Enter();
    FS_RETURN_IF_ERROR(AfterCompute());
    if (data->nbytes() > 0) {
      FS_RETURN_IF_ERROR(Launched(nccl_->broadcast(data->raw_data(), data->raw_data(), data->nbytes(), ncclInt8, root,
                                                   comm_, stream_),
                                  number, "broadcast", "ncclBroadcast", since));
    }
    return Finish(number, "broadcast", since);
  }

  Status Barrier() override {
    FS_RETURN_IF_ERROR(Usable());
    const Clock::time_point since = Clock::now();
    const int64_t number = Enter();
    FS_RETURN_IF_ERROR(AfterCompute());
    FS_RETURN_IF_ERROR(Launched(nccl_->all_reduce(scratch_.raw_data(), scratch_.raw_data(), 1, ncclFloat32, ncclSum,
                                                  comm_, stream_),
                                number, "barrier", "ncclAllReduce", since));
    return Finish(number, "barrier", since);
  }

  [[noreturn]] void Abort(const std::string& message, int code) override {
    if (comm_ != nullptr) nccl_->comm_abort(comm_);
    comm_ = nullptr;
    host_->Abort(message, code);
    std::_Exit(code);  // Abort does not return; this keeps [[noreturn]] honest
  }

 private:
  struct Started {
    cudaEvent_t done = nullptr;
    int64_t number = 0;
    Clock::time_point since;
  };

  static Clock::duration Seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  // The job-wide number of the next collective (the host's counter, so
  // both backends' collectives line up in the who-is-missing question).
  int64_t Enter() { return watch_ != nullptr ? watch_->EnterCollective() : ++collective_; }

  Status NcclFail(ncclResult_t rc, const char* call) const {
    std::string last = nccl_->last_error(comm_);
    return Internal(std::string("NCCL communicator: ") + call + " failed: " + nccl_->error_string(rc) +
                    (last.empty() ? "" : " (" + last + ")"));
  }

  // After an asynchronous error the NCCL communicator is aborted: it can
  // carry nothing more, and every later collective says why.
  Status Broken(ncclResult_t state, const char* what) {
    const std::string last = nccl_->last_error(comm_);
    broken_ = std::string("an asynchronous NCCL error in ") + what + ": " + nccl_->error_string(state) +
              (last.empty() ? "" : " (" + last + ")");
    if (comm_ != nullptr) nccl_->comm_abort(comm_);
    comm_ = nullptr;
    return Internal("NCCL communicator: " + broken_);
  }

  Status Usable() const {
    if (comm_ != nullptr) return Status::OK();
    return FailedPrecondition(broken_.empty() ? std::string("NCCL communicator: not set up")
                                              : "NCCL communicator: aborted after " + broken_);
  }

  // Work queued on the compute slot before this collective (the kernels
  // that wrote its data) comes first; the host does not wait for it.
  Status AfterCompute() {
    FS_CUDA_CALL(cudaSetDevice(device_.index), "cudaSetDevice");
    FS_CUDA_CALL(cudaEventRecord(before_, /*compute slot: the legacy default stream*/ nullptr), "cudaEventRecord");
    FS_CUDA_CALL(cudaStreamWaitEvent(stream_, before_, 0), "cudaStreamWaitEvent");
    return Status::OK();
  }

  // The NCCL call `call` of collective #number returned `rc`: an error, or
  // (in progress / success) poll until NCCL has settled it.
  Status Launched(ncclResult_t rc, int64_t number, const char* what, const char* call, Clock::time_point since) {
    if (!Accepted(rc)) return NcclFail(rc, call);
    return Settle(number, what, call, since);
  }

  // Polls ncclCommGetAsyncError until the last NCCL call is no longer in
  // progress (NCCL's rule for non-blocking communicators before the next
  // call), answering questions; TimedOut at the deadline.
  Status Settle(int64_t number, const char* what, const char* call, Clock::time_point since) {
    const Clock::time_point deadline = since + Seconds(options_.timeout_seconds);
    std::chrono::microseconds pause(1);
    for (int polls = 0;; ++polls) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t rc = nccl_->comm_get_async_error(comm_, &state);
      if (rc != ncclSuccess) return NcclFail(rc, "ncclCommGetAsyncError");
      if (state == ncclSuccess) return Status::OK();
      if (state != ncclInProgress) return Broken(state, call);
      if (Pause(polls, deadline, &pause)) TimedOut(number, what);
    }
  }

  // Records the end of collective #number on the comm stream and waits for it.
  Status Finish(int64_t number, const char* what, Clock::time_point since) {
    cudaEvent_t done = nullptr;
    FS_CUDA_CALL(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    cudaError_t err = cudaEventRecord(done, stream_);
    const Status s = err != cudaSuccess ? CudaFail("cudaEventRecord", err) : Complete(done, number, what, since);
    cudaEventDestroy(done);
    return s;
  }

  // Polls `done` until the GPU has reached it, watching for NCCL's
  // asynchronous errors and answering questions; TimedOut at the deadline.
  Status Complete(cudaEvent_t done, int64_t number, const char* what, Clock::time_point since) {
    FS_RETURN_IF_ERROR(Usable());
    const Clock::time_point deadline = since + Seconds(options_.timeout_seconds);
    std::chrono::microseconds pause(1);
    for (int polls = 0;; ++polls) {
      const cudaError_t q = cudaEventQuery(done);
      if (q == cudaSuccess) return Status::OK();
      if (q != cudaErrorNotReady) return CudaFail("cudaEventQuery", q);
      ncclResult_t state = ncclSuccess;
      const ncclResult_t rc = nccl_->comm_get_async_error(comm_, &state);
      if (rc != ncclSuccess) return NcclFail(rc, "ncclCommGetAsyncError");
      if (state != ncclSuccess && state != ncclInProgress) return Broken(state, what);
      if (Pause(polls, deadline, &pause)) TimedOut(number, what);
    }
  }

  // Between polls: answers questions, then yields for the first 20 ms (a
  // collective of a few MB takes about that) and sleeps after, growing to
  // 1 ms. True when the deadline has passed.
  bool Pause(int polls, Clock::time_point deadline, std::chrono::microseconds* pause) {
    if ((polls & 15) == 0 && watch_ != nullptr) watch_->AnswerQuestions();
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return true;
    if (polls < 2000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(*pause);
      *pause = std::min(*pause * 2, std::chrono::microseconds(1000));
    }
    return false;
  }

  // At the deadline: aborts the NCCL communicator (its kernels stop holding
  // the GPU), then names the missing ranks over the host and ends the job.
  [[noreturn]] void TimedOut(int64_t number, const char* what) {
    if (comm_ != nullptr) nccl_->comm_abort(comm_);
    comm_ = nullptr;
    std::string gpu_what = std::string(what) + " on " + device_.ToString() + " through NCCL";
    if (watch_ != nullptr) watch_->TimedOut(number, gpu_what.c_str(), options_.timeout_seconds);
    std::ostringstream msg;
    msg << "rank " << rank() << " waited " << options_.timeout_seconds << " s in collective #" << number << " ("
        << gpu_what << ") and it did not complete: "
        << (size() == 1 ? "it is the only rank, so the GPU made no progress"
                        : "the other ranks cannot be asked (no MPI)")
        << "; set FORESIGHT_COLLECTIVE_TIMEOUT (seconds) for longer waits";
    host_->Abort(msg.str(), 3);
    std::_Exit(3);  // as in Abort
  }

  const NcclLibrary* nccl_;
  Communicator* host_;
  HangWatch* watch_;  // null for the single-process host
  Device device_;
  CommunicatorOptions options_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t before_ = nullptr;
  Tensor scratch_;  // the barrier's one element
  std::string broken_;
  int64_t collective_ = 0;  // without a hang watch
  std::unordered_map<int64_t, Started> started_;
  int64_t next_pending_ = 0;
};

}  // namespace
}  // namespace internal

StatusOr<std::unique_ptr<Communicator>> MakeNcclCommunicator(Communicator* host, Device device,
                                                             const CommunicatorOptions& options) {
  if (host == nullptr) return InvalidArgument("NCCL communicator: no host communicator to bootstrap it");
  if (!device.is_cuda()) {
    return InvalidArgument("NCCL communicator: carries tensors on a cuda device, got " + device.ToString());
  }
  // The GPU first, then NCCL: on a machine without a GPU the reason is that.
  FS_RETURN_IF_ERROR(CudaAvailable());
  if (device.index < 0 || device.index >= CudaDeviceCount()) {
    return InvalidArgument("NCCL communicator: " + device.ToString() + " requested, but " +
                           std::to_string(CudaDeviceCount()) + " GPU(s) are visible");
  }
  FS_ASSIGN_OR_RETURN(const internal::NcclLibrary* nccl, internal::Nccl());
  auto comm = std::make_unique<internal::NcclCommunicator>(nccl, host, device, options);
  FS_RETURN_IF_ERROR(comm->Init());
  return std::unique_ptr<Communicator>(std::move(comm));
}

}  // namespace foresight
