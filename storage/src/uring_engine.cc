// The io_uring engine (liburing): submission batching, passive waits in
// io_uring_wait_cqe, and fixed (pre-registered) bounce buffers so the kernel
// does not pin and unpin pages on every request.
#include <liburing.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "foresight/core/logging.h"
#include "io_engine.h"

namespace foresight::storage::internal {
namespace {

class UringEngine final : public IoEngine {
 public:
  UringEngine() = default;
  ~UringEngine() override {
    if (initialised_) io_uring_queue_exit(&ring_);
  }

  Status Init(int depth, char* pool, size_t buffer_bytes, int buffers, bool* refused) {
    const int r = io_uring_queue_init(static_cast<unsigned>(depth), &ring_, 0);
    if (r < 0) {
      *refused = (r == -EPERM || r == -ENOSYS || r == -EACCES);
      return ErrnoError("io_uring_queue_init(" + std::to_string(depth) + ")", -r);
    }
    initialised_ = true;
    if (pool != nullptr && buffers > 0) {
      std::vector<iovec> iov(buffers);
      for (int i = 0; i < buffers; ++i) {
        iov[i].iov_base = pool + size_t(i) * buffer_bytes;
        iov[i].iov_len = buffer_bytes;
      }
      // Registration can fail under a low RLIMIT_MEMLOCK (old kernels):
      // plain reads then do the same work, only pinning pages per request.
      const int rr = io_uring_register_buffers(&ring_, iov.data(), iov.size());
      fixed_ = rr == 0;
      if (!fixed_) {
        FS_LOG(DEBUG) << "io_uring_register_buffers: " << std::strerror(-rr)
                      << "; using unregistered buffers";
      }
    }
    return Status::OK();
  }

  const char* name() const override { return "io_uring"; }

  Status Queue(const IoOp& op) override {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
      // The submission ring is full of unsubmitted entries: hand them over.
      FS_RETURN_IF_ERROR(Submit());
      sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) return Internal("io_uring: no submission entry after submit");
    }
    const bool fixed = fixed_ && op.buf_index >= 0;
    if (op.write) {
      if (fixed) io_uring_prep_write_fixed(sqe, op.fd, op.buf, op.len, op.offset, op.buf_index);
      else io_uring_prep_write(sqe, op.fd, op.buf, op.len, op.offset);
    } else {
      if (fixed) io_uring_prep_read_fixed(sqe, op.fd, op.buf, op.len, op.offset, op.buf_index);
      else io_uring_prep_read(sqe, op.fd, op.buf, op.len, op.offset);
    }
    io_uring_sqe_set_data64(sqe, op.tag);
    ++unsubmitted_;
    return Status::OK();
  }

  Status Submit() override {
    while (unsubmitted_ > 0) {
      const int r = io_uring_submit(&ring_);
      if (r == -EINTR || r == -EAGAIN) continue;
      if (r < 0) return ErrnoError("io_uring_submit", -r);
      unsubmitted_ -= std::min(unsubmitted_, r);
    }
    return Status::OK();
  }

  Status WaitReady(int n) override {
    FS_RETURN_IF_ERROR(Submit());
    io_uring_cqe* cqe = nullptr;
    int r;
    do {
      r = io_uring_wait_cqe_nr(&ring_, &cqe, static_cast<unsigned>(std::max(1, n)));
    } while (r == -EINTR);
    if (r < 0) return ErrnoError("io_uring_wait_cqe_nr", -r);
    return Status::OK();
  }

  bool TryReap(IoCompletion* out) override {
    io_uring_cqe* cqe = nullptr;
    if (io_uring_peek_cqe(&ring_, &cqe) != 0 || cqe == nullptr) return false;
    *out = Take(cqe);
    return true;
  }

 private:
  IoCompletion Take(io_uring_cqe* cqe) {
    IoCompletion c{io_uring_cqe_get_data64(cqe), cqe->res};
    io_uring_cqe_seen(&ring_, cqe);
    return c;
  }

  io_uring ring_{};
  bool initialised_ = false;
  bool fixed_ = false;
  int unsubmitted_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<IoEngine>> MakeUringEngine(int depth, char* pool, size_t buffer_bytes,
                                                    int buffers, bool* refused) {
  *refused = false;
  auto e = std::make_unique<UringEngine>();
  FS_RETURN_IF_ERROR(e->Init(depth, pool, buffer_bytes, buffers, refused));
  return std::unique_ptr<IoEngine>(std::move(e));
}

}  // namespace foresight::storage::internal
