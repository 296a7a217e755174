// The MPI backend of Communicator (communicator.h). Every collective is
// non-blocking (MPI_I*) and polled with a deadline, so a rank that died or
// hangs cannot make the others wait forever: at the deadline a waiting
// rank asks every other rank, on a control communicator of its own, which
// collective it is in. Ranks waiting in a collective answer from their
// polling loop; a rank that is dead, stopped or stuck outside a collective
// does not. After CommunicatorOptions::answer_seconds the asker names the
// ranks that did not answer and aborts the job (MPI_Abort), so mpirun
// ends every rank. The question costs nothing until a deadline passes.
#include <mpi.h>
#include <sched.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "../communicator_checks.h"
#include "../hang_watch.h"
#include "foresight/core/communicator.h"
#include "foresight/core/logging.h"

namespace foresight {

bool HaveMpi() { return true; }

namespace internal {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kAskTag = 1;     // payload: the asker's collective number
constexpr int kAnswerTag = 2;  // payload: the answerer's collective number

std::string MpiError(int rc, const char* call) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(call) + " failed: " + std::string(text, static_cast<size_t>(len));
}

#define FS_MPI_CALL(call, name)                       \
  do {                                                \
    const int fs_mpi_rc_ = (call);                    \
    if (fs_mpi_rc_ != MPI_SUCCESS) return Internal(MpiError(fs_mpi_rc_, name)); \
  } while (0)

MPI_Datatype MpiType(Communicator::SumType t) {
  switch (t) {
    case Communicator::SumType::kF32: return MPI_FLOAT;
    case Communicator::SumType::kF64: return MPI_DOUBLE;
    case Communicator::SumType::kI64: return MPI_INT64_T;
  }
  return MPI_DATATYPE_NULL;
}

size_t SizeOf(Communicator::SumType t) { return t == Communicator::SumType::kF32 ? 4 : 8; }

// MPI counts are int: a byte count beyond that is refused, not truncated.
Status ToCount(int64_t n, const char* op, int* out) {
  if (n > INT_MAX) {
    return OutOfRange(std::string(op) + ": " + std::to_string(n) +
                      " bytes exceed MPI's int count; send it in parts");
  }
  *out = static_cast<int>(n);
  return Status::OK();
}

// A buffer MPI may be handed for a part of zero bytes.
void* BufferOf(const Tensor& t) {
  static char empty;
  return t.numel() == 0 ? &empty : t.raw_data();
}

// Also the hang watch of an NCCL communicator bootstrapped on it
// (hang_watch.h): its collectives take numbers from collective_ too.
class MpiCommunicator : public Communicator, public HangWatch {
 public:
  explicit MpiCommunicator(const CommunicatorOptions& options) : options_(options) {}

  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Comm_free(&ctrl_);
    MPI_Comm_free(&comm_);
    MPI_Finalize();
  }

  Status Init() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      // Only the thread that made the communicator calls MPI.
      FS_MPI_CALL(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    // Collectives and the who-is-missing questions never share a
    // communicator, so a question cannot match a collective's message.
    FS_MPI_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    FS_MPI_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &ctrl_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(ctrl_, MPI_ERRORS_RETURN);
    FS_MPI_CALL(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    FS_MPI_CALL(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    return Status::OK();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return "mpi"; }

  Status StartAllReduceSum(void* data, int64_t n, SumType type, Pending* pending) override {
    FS_RETURN_IF_ERROR(CheckSpan(data, n, "AllReduceSum"));
    // In parts of at most INT_MAX elements (MPI's count is an int); one
    // collective for n == 0 too, so every rank calls the same number.
    static char empty;
    char* base = n == 0 ? &empty : static_cast<char*>(data);
    Started started;
    started.number = ++collective_;
    int64_t begin = 0;
    do {
      const int count = static_cast<int>(std::min<int64_t>(INT_MAX, n - begin));
      MPI_Request req;
      FS_MPI_CALL(MPI_Iallreduce(MPI_IN_PLACE, base + begin * SizeOf(type), count, MpiType(type), MPI_SUM, comm_,
                                 &req),
                  "MPI_Iallreduce");
      started.requests.push_back(req);
      begin += count;
    } while (begin < n);
    const int64_t id = next_pending_++;
    started_.emplace(id, std::move(started));
    *pending = Pending(id);
    return Status::OK();
  }

  Status Wait(Pending* pending) override {
    auto it = pending->valid() ? started_.find(pending->id()) : started_.end();
    if (it == started_.end()) return InvalidArgument("Wait: the handle was not started or was already waited for");
    Started started = std::move(it->second);
    started_.erase(it);
    *pending = Pending();
    return Poll(started.requests.data(), static_cast<int>(started.requests.size()), started.number, "all-reduce");
  }

  int64_t EnterCollective() override { return ++collective_; }

  Status Progress() override {
    for (auto& [id, started] : started_) {
      int done = 0;
      FS_MPI_CALL(MPI_Testall(static_cast<int>(started.requests.size()), started.requests.data(), &done,
                              MPI_STATUSES_IGNORE),
                  "MPI_Testall");
    }
    AnswerQuestions();
    return Status::OK();
  }

  Status AllGather(const Tensor& send, Tensor* out) override {
    FS_RETURN_IF_ERROR(CheckHostTensor(send, "AllGather", "send"));
    Shape shape = RowShape(send);
    shape.insert(shape.begin(), RowsOf(send) * size_);
    Tensor gathered = Tensor::Empty(shape, send.dtype());
    int bytes = 0;
    FS_RETURN_IF_ERROR(ToCount(static_cast<int64_t>(send.nbytes()) * size_, "AllGather", &bytes));
    bytes = static_cast<int>(send.nbytes());
    MPI_Request req;
    FS_MPI_CALL(MPI_Iallgather(BufferOf(send), bytes, MPI_BYTE, BufferOf(gathered), bytes, MPI_BYTE, comm_, &req),
                "MPI_Iallgather");
    FS_RETURN_IF_ERROR(Wait(&req, "all-gather"));
    *out = std::move(gathered);
    return Status::OK();
  }

  Status AllToAllV(const Tensor& send, const std::vector<int64_t>& send_counts, Tensor* out,
                   std::vector<int64_t>* recv_counts) override {
    FS_RETURN_IF_ERROR(CheckSendCounts(send, send_counts, size_, "AllToAllV"));
    // The row counts first, so each rank can size what it receives.
    std::vector<int64_t> counts_in(size_);
    MPI_Request req;
    FS_MPI_CALL(MPI_Ialltoall(send_counts.data(), 1, MPI_INT64_T, counts_in.data(), 1, MPI_INT64_T, comm_, &req),
                "MPI_Ialltoall");
    FS_RETURN_IF_ERROR(Wait(&req, "all-to-all (counts)"));
    const Shape row_shape = RowShape(send);
    const int64_t row_bytes = ShapeNumel(row_shape) * static_cast<int64_t>(send.element_size());
    std::vector<int> send_bytes(size_), send_displs(size_), recv_bytes(size_), recv_displs(size_);
    int64_t send_at = 0, recv_at = 0;
    for (int r = 0; r < size_; ++r) {
      if (counts_in[r] < 0) return Internal("AllToAllV: rank " + std::to_string(r) + " sent a negative count");
      FS_RETURN_IF_ERROR(ToCount(send_counts[r] * row_bytes, "AllToAllV", &send_bytes[r]));
      FS_RETURN_IF_ERROR(ToCount(send_at, "AllToAllV", &send_displs[r]));
      FS_RETURN_IF_ERROR(ToCount(counts_in[r] * row_bytes, "AllToAllV", &recv_bytes[r]));
      FS_RETURN_IF_ERROR(ToCount(recv_at, "AllToAllV", &recv_displs[r]));
      send_at += send_counts[r] * row_bytes;
      recv_at += counts_in[r] * row_bytes;
    }
    int64_t rows_in = 0;
    for (int64_t c : counts_in) rows_in += c;
    Shape shape = row_shape;
    shape.insert(shape.begin(), rows_in);
    Tensor received = Tensor::Empty(shape, send.dtype());
    FS_MPI_CALL(MPI_Ialltoallv(BufferOf(send), send_bytes.data(), send_displs.data(), MPI_BYTE, BufferOf(received),
                               recv_bytes.data(), recv_displs.data(), MPI_BYTE, comm_, &req),
                "MPI_Ialltoallv");
    FS_RETURN_IF_ERROR(Wait(&req, "all-to-all"));
    *out = std::move(received);
    *recv_counts = std::move(counts_in);
    return Status::OK();
  }

  Status Broadcast(Tensor* data, int root) override {
    FS_RETURN_IF_ERROR(CheckHostTensor(*data, "Broadcast", "the tensor"));
    FS_RETURN_IF_ERROR(CheckRoot(root, size_, "Broadcast"));
    int bytes = 0;
    FS_RETURN_IF_ERROR(ToCount(static_cast<int64_t>(data->nbytes()), "Broadcast", &bytes));
    MPI_Request req;
    FS_MPI_CALL(MPI_Ibcast(BufferOf(*data), bytes, MPI_BYTE, root, comm_, &req), "MPI_Ibcast");
    return Wait(&req, "broadcast");
  }

  Status Barrier() override {
    MPI_Request req;
    FS_MPI_CALL(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier");
    return Wait(&req, "barrier");
  }

  [[noreturn]] void Abort(const std::string& message, int code) override {
    LogLine(LogLevel::kError, message + " (ending all " + std::to_string(size_) + " ranks)");
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
  }

 private:
  // Polls `req` until it completes, answering other ranks' questions
  // meanwhile; at the deadline, finds the missing ranks and aborts. Open
  // MPI moves a non-blocking collective's rounds only inside MPI_Test (a
  // 148 KB all-reduce takes tens of rounds), so the first kSpinSeconds
  // poll back to back, as a blocking MPI call would (yielding there costs
  // a scheduler slice per round on a busy machine: 20 ms instead of
  // 35 us); up to kYieldSeconds poll and yield the core; a longer wait (a
  // slower rank) sleeps between polls, growing to 1 ms.
  Status Wait(MPI_Request* req, const char* what) { return Poll(req, 1, ++collective_, what); }

  // Polls the `count` requests of collective #`number` until all complete,
  // as Wait describes.
  Status Poll(MPI_Request* reqs, int count, int64_t number, const char* what) {
    constexpr double kSpinSeconds = 0.001;
    constexpr double kYieldSeconds = 0.02;
    const Clock::time_point start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(options_.timeout_seconds));
    const auto spin_until =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kSpinSeconds));
    const auto yield_until =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kYieldSeconds));
    bool spinning = true;
    std::chrono::microseconds pause(10);
    for (int polls = 0;; ++polls) {
      int done = 0;
      FS_MPI_CALL(MPI_Testall(count, reqs, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
      if (done) return Status::OK();
      if ((polls & 63) == 0) {  // the clock and the question probe cost more than a poll
        AnswerQuestions();
        const Clock::time_point now = Clock::now();
        if (now >= deadline) TimedOut(number, what, options_.timeout_seconds);
        if (now >= yield_until) {
          std::this_thread::sleep_for(pause);
          pause = std::min(pause * 2, std::chrono::microseconds(1000));
          continue;
        }
        spinning = now < spin_until;
      }
      if (!spinning) sched_yield();
    }
  }

  // Answers every question waiting on the control communicator with this
  // rank's current collective number, and retires finished answers.
  void AnswerQuestions() override {
    for (;;) {
      int flag = 0;
      MPI_Status st;
      if (MPI_Iprobe(MPI_ANY_SOURCE, kAskTag, ctrl_, &flag, &st) != MPI_SUCCESS || !flag) break;
      int64_t asked = 0;
      MPI_Recv(&asked, 1, MPI_INT64_T, st.MPI_SOURCE, kAskTag, ctrl_, MPI_STATUS_IGNORE);
      PendingSend p;
      p.value = std::make_unique<int64_t>(collective_);
      MPI_Isend(p.value.get(), 1, MPI_INT64_T, st.MPI_SOURCE, kAnswerTag, ctrl_, &p.req);
      pending_.push_back(std::move(p));
    }
    for (auto it = pending_.begin(); it != pending_.end();) {
      int done = 0;
      MPI_Test(&it->req, &done, MPI_STATUS_IGNORE);
      it = done ? pending_.erase(it) : std::next(it);
    }
  }

  // `number`: the collective this rank waited for (an earlier one than the
  // last it entered when sums were started ahead).
  [[noreturn]] void TimedOut(int64_t number, const char* what, double waited_seconds) override {
    std::vector<PendingSend> asks;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      PendingSend p;
      p.value = std::make_unique<int64_t>(collective_);
      MPI_Isend(p.value.get(), 1, MPI_INT64_T, r, kAskTag, ctrl_, &p.req);
      asks.push_back(std::move(p));
    }
    std::vector<int64_t> answer(size_, -1);  // -1: no answer
    answer[rank_] = collective_;
    int answered = 1;
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(options_.answer_seconds));
    while (answered < size_ && Clock::now() < until) {
      AnswerQuestions();  // the others are asking too
      int flag = 0;
      MPI_Status st;
      if (MPI_Iprobe(MPI_ANY_SOURCE, kAnswerTag, ctrl_, &flag, &st) == MPI_SUCCESS && flag) {
        int64_t theirs = 0;
        MPI_Recv(&theirs, 1, MPI_INT64_T, st.MPI_SOURCE, kAnswerTag, ctrl_, MPI_STATUS_IGNORE);
        if (answer[st.MPI_SOURCE] < 0) ++answered;
        answer[st.MPI_SOURCE] = theirs;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    std::vector<int> silent, elsewhere;
    for (int r = 0; r < size_; ++r) {
      if (answer[r] < 0) silent.push_back(r);
      else if (answer[r] != collective_) elsewhere.push_back(r);
    }
    std::ostringstream msg;
    msg << "rank " << rank_ << " waited " << waited_seconds << " s in collective #" << number << " ("
        << what << ") and it did not complete: ";
    if (!silent.empty()) {
      msg << (silent.size() == 1 ? "rank " : "ranks ");
      for (size_t i = 0; i < silent.size(); ++i) msg << (i ? ", " : "") << silent[i];
      msg << " did not answer within " << options_.answer_seconds
          << " s (dead, stopped, or stuck outside a collective)";
    }
    for (int r : elsewhere) {
      msg << (silent.empty() ? "" : "; ") << "rank " << r << " is in collective #" << answer[r];
    }
    if (silent.empty() && elsewhere.empty()) msg << "every rank is in it, but it made no progress (network?)";
    msg << "; set FORESIGHT_COLLECTIVE_TIMEOUT (seconds) for longer waits";
    Abort(msg.str(), 3);
  }

  struct PendingSend {
    std::unique_ptr<int64_t> value;
    MPI_Request req = MPI_REQUEST_NULL;
  };

  CommunicatorOptions options_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm ctrl_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int64_t collective_ = 0;  // collectives this rank has entered
  // Started, not yet waited-for sums (StartAllReduceSum), by handle id.
  struct Started {
    std::vector<MPI_Request> requests;  // one per part of at most INT_MAX elements
    int64_t number = 0;                 // its collective number
  };
  std::unordered_map<int64_t, Started> started_;
  int64_t next_pending_ = 0;
  std::list<PendingSend> pending_;
};

}  // namespace

StatusOr<std::unique_ptr<Communicator>> MakeMpiWorld(const CommunicatorOptions& options) {
  auto comm = std::make_unique<MpiCommunicator>(options);
  FS_RETURN_IF_ERROR(comm->Init());
  return std::unique_ptr<Communicator>(std::move(comm));
}

}  // namespace internal
}  // namespace foresight
