// The synchronous engine: each queued operation is one pread/pwrite (EINTR
// and short transfers retried), its completion kept for TryReap.
#include <unistd.h>

#include <cerrno>
#include <deque>

#include "io_engine.h"

namespace foresight::storage::internal {
namespace {

class PreadEngine final : public IoEngine {
 public:
  const char* name() const override { return "pread"; }

  Status Queue(const IoOp& op) override {
    size_t done = 0;
    int64_t result = 0;
    while (done < op.len) {
      const off_t at = static_cast<off_t>(op.offset + done);
      const ssize_t r = op.write ? ::pwrite(op.fd, op.buf + done, op.len - done, at)
                                 : ::pread(op.fd, op.buf + done, op.len - done, at);
      if (r < 0) {
        if (errno == EINTR) continue;
        result = -errno;
        break;
      }
      if (r == 0) break;  // end of file: a short read, judged by the caller
      done += static_cast<size_t>(r);
    }
    if (result == 0) result = static_cast<int64_t>(done);
    done_.push_back({op.tag, result});
    return Status::OK();
  }
  Status Submit() override { return Status::OK(); }
  // Every queued operation has completed already.
  Status WaitReady(int n) override {
    if (static_cast<int64_t>(done_.size()) < n) {
      return Internal("pread engine: waiting for " + std::to_string(n) + " completions with " +
                      std::to_string(done_.size()) + " outstanding");
    }
    return Status::OK();
  }
  bool TryReap(IoCompletion* out) override {
    if (done_.empty()) return false;
    *out = done_.front();
    done_.pop_front();
    return true;
  }

 private:
  std::deque<IoCompletion> done_;
};

}  // namespace

std::unique_ptr<IoEngine> MakePreadEngine() { return std::make_unique<PreadEngine>(); }

}  // namespace foresight::storage::internal
