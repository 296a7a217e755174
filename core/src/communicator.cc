#include "foresight/core/communicator.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

#include "communicator_checks.h"
#include "hang_watch.h"
#include "foresight/core/logging.h"
#include "foresight/core/nccl_communicator.h"

namespace foresight {

namespace internal {

Status CheckTensorOn(const Tensor& t, Device device, const char* op, const char* what) {
  if (!t.defined()) return InvalidArgument(std::string(op) + ": " + what + " is undefined");
  if (t.device() != device) {
    return InvalidArgument(std::string(op) + ": " + what + " must be " +
                           (device.is_cpu() ? std::string("a host tensor") : "a tensor on " + device.ToString()) +
                           ", got " + t.ToString());
  }
  if (!t.is_contiguous()) {
    return InvalidArgument(std::string(op) + ": " + what + " must be contiguous, got " + t.ToString());
  }
  return Status::OK();
}

Status CheckHostTensor(const Tensor& t, const char* op, const char* what) {
  return CheckTensorOn(t, Device::Cpu(), op, what);
}

Status CheckSpan(const void* data, int64_t n, const char* op) {
  if (n < 0) return InvalidArgument(std::string(op) + ": " + std::to_string(n) + " elements");
  if (n > 0 && data == nullptr) return InvalidArgument(std::string(op) + ": null data for " + std::to_string(n) + " elements");
  return Status::OK();
}

int64_t RowsOf(const Tensor& t) { return t.dim() == 0 ? 1 : t.size(0); }

Shape RowShape(const Tensor& t) {
  if (t.dim() == 0) return {};
  return Shape(t.shape().begin() + 1, t.shape().end());
}

Status CheckSendCounts(const Tensor& send, const std::vector<int64_t>& counts, int size, const char* op,
                       Device device) {
  FS_RETURN_IF_ERROR(CheckTensorOn(send, device, op, "send"));
  if (send.dim() < 1) return InvalidArgument(std::string(op) + ": send must have rows, got " + send.ToString());
  if (static_cast<int>(counts.size()) != size) {
    return InvalidArgument(std::string(op) + ": " + std::to_string(counts.size()) + " send counts for " +
                           std::to_string(size) + " ranks");
  }
  int64_t total = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] < 0) {
      return InvalidArgument(std::string(op) + ": send count for rank " + std::to_string(r) + " is " +
                             std::to_string(counts[r]));
    }
    total += counts[r];
  }
  if (total != send.size(0)) {
    return InvalidArgument(std::string(op) + ": send counts add up to " + std::to_string(total) +
                           " rows, but send has " + std::to_string(send.size(0)));
  }
  return Status::OK();
}

Status CheckRoot(int root, int size, const char* op) {
  if (root < 0 || root >= size) {
    return InvalidArgument(std::string(op) + ": root " + std::to_string(root) + " is not a rank of " +
                           std::to_string(size));
  }
  return Status::OK();
}

// The MPI world (mpi/mpi_communicator.cc) or the refusal of a build
// without MPI (no_mpi.cc).
StatusOr<std::unique_ptr<Communicator>> MakeMpiWorld(const CommunicatorOptions& options);

HangWatch* HangWatchOf(Communicator* host) { return dynamic_cast<HangWatch*>(host); }

StatusOr<CommunicatorOptions> ResolveOptions(const CommunicatorOptions& options) {
  CommunicatorOptions o = options;
  if (const char* t = std::getenv("FORESIGHT_COLLECTIVE_TIMEOUT")) {
    char* end = nullptr;
    const double seconds = std::strtod(t, &end);
    if (end == t || *end != '\0' || !(seconds > 0)) {
      return InvalidArgument(std::string("FORESIGHT_COLLECTIVE_TIMEOUT must be a positive number of seconds, got '") +
                             t + "'");
    }
    o.timeout_seconds = seconds;
  }
  return o;
}

}  // namespace internal

Status Communicator::AllReduceSum(void* data, int64_t n, SumType type) {
  Pending pending;
  FS_RETURN_IF_ERROR(StartAllReduceSum(data, n, type, &pending));
  return Wait(&pending);
}

Status Communicator::AllReduceSum(Tensor* data) {
  FS_RETURN_IF_ERROR(internal::CheckTensorOn(*data, tensor_device(), "AllReduceSum", "the tensor"));
  if (data->dtype() == DType::kF32) return AllReduceSum(data->data<float>(), data->numel());
  if (data->dtype() == DType::kI64) return AllReduceSum(data->data<int64_t>(), data->numel());
  return InvalidArgument("AllReduceSum: sums f32 or i64 tensors, got " + data->ToString());
}

Status Communicator::AllToAll(const Tensor& send, Tensor* out) {
  FS_RETURN_IF_ERROR(internal::CheckTensorOn(send, tensor_device(), "AllToAll", "send"));
  if (send.dim() < 1 || send.size(0) % size() != 0) {
    return InvalidArgument("AllToAll: send's rows must divide evenly among " + std::to_string(size()) +
                           " ranks, got " + send.ToString());
  }
  std::vector<int64_t> counts(size(), send.size(0) / size());
  std::vector<int64_t> recv_counts;
  return AllToAllV(send, counts, out, &recv_counts);
}

namespace {

class SingleProcessCommunicator : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* backend() const override { return "single"; }

  using Communicator::AllReduceSum;
  Status AllReduceSum(void* data, int64_t n, SumType) override {
    return internal::CheckSpan(data, n, "AllReduceSum");
  }

  Status StartAllReduceSum(void* data, int64_t n, SumType, Pending* pending) override {
    FS_RETURN_IF_ERROR(internal::CheckSpan(data, n, "StartAllReduceSum"));
    *pending = Pending(next_++);  // the sum of one rank is already there
    return Status::OK();
  }

  Status Wait(Pending* pending) override {
    if (!pending->valid()) return InvalidArgument("Wait: the handle was not started or was already waited for");
    *pending = Pending();
    return Status::OK();
  }

  Status Progress() override { return Status::OK(); }

  Status AllGather(const Tensor& send, Tensor* out) override {
    FS_RETURN_IF_ERROR(internal::CheckHostTensor(send, "AllGather", "send"));
    Shape shape = internal::RowShape(send);
    shape.insert(shape.begin(), internal::RowsOf(send));
    FS_ASSIGN_OR_RETURN(*out, send.Clone().Reshape(shape));
    return Status::OK();
  }

  Status AllToAllV(const Tensor& send, const std::vector<int64_t>& send_counts, Tensor* out,
                   std::vector<int64_t>* recv_counts) override {
    FS_RETURN_IF_ERROR(internal::CheckSendCounts(send, send_counts, 1, "AllToAllV"));
    *out = send.Clone();
    *recv_counts = send_counts;
    return Status::OK();
  }

  Status Broadcast(Tensor* data, int root) override {
    FS_RETURN_IF_ERROR(internal::CheckHostTensor(*data, "Broadcast", "the tensor"));
    return internal::CheckRoot(root, 1, "Broadcast");
  }

  Status Barrier() override { return Status::OK(); }

  [[noreturn]] void Abort(const std::string& message, int code) override {
    LogLine(LogLevel::kError, message);
    std::_Exit(code);
  }

 private:
  int64_t next_ = 0;
};

}  // namespace

std::unique_ptr<Communicator> MakeSingleProcessCommunicator() {
  return std::make_unique<SingleProcessCommunicator>();
}

int LaunchedWorldSize() {
  const char* v = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (v == nullptr) return 1;
  const int n = std::atoi(v);
  return n >= 1 ? n : 1;
}

StatusOr<Communicator*> WorldCommunicator(const CommunicatorOptions& options) {
  static std::mutex mu;
  static std::unique_ptr<Communicator> world;
  std::lock_guard<std::mutex> lock(mu);
  if (world != nullptr) return world.get();
  // Not launched by mpirun, or one rank of a build without MPI: one process.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr || (!HaveMpi() && LaunchedWorldSize() == 1)) {
    world = MakeSingleProcessCommunicator();
    return world.get();
  }
  FS_ASSIGN_OR_RETURN(const CommunicatorOptions o, internal::ResolveOptions(options));
  FS_ASSIGN_OR_RETURN(world, internal::MakeMpiWorld(o));
  if (world->size() > 1) {
    SetLogPrefix("[rank " + std::to_string(world->rank()) + "/" + std::to_string(world->size()) + "] ");
  }
  return world.get();
}

StatusOr<Communicator*> CommunicatorFor(Device device, Communicator* world) {
  if (device.is_cpu() || world->tensor_device() == device) return world;
  static std::mutex mu;
  // Never destroyed (see the header): raw pointers in a leaked map.
  static auto* made = new std::map<std::pair<Communicator*, int>, Communicator*>;
  std::lock_guard<std::mutex> lock(mu);
  auto it = made->find({world, device.index});
  if (it != made->end()) return it->second;
  FS_ASSIGN_OR_RETURN(const CommunicatorOptions options, internal::ResolveOptions(CommunicatorOptions()));
  FS_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> comm, MakeNcclCommunicator(world, device, options));
  Communicator* c = comm.release();
  made->emplace(std::make_pair(world, device.index), c);
  return c;
}

}  // namespace foresight
