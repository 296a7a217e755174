// IoEngine: how the disk row store moves its aligned extents. io_uring keeps
// up to `depth` reads and writes in flight; the pread engine performs each
// one synchronously when queued (the fallback when the kernel refuses
// io_uring, and the path tests compare io_uring against). Single-threaded:
// the store's owning thread makes every call. Private to storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "foresight/core/status.h"

namespace foresight::storage::internal {

struct IoOp {
  int fd = -1;
  bool write = false;
  char* buf = nullptr;
  uint32_t len = 0;
  uint64_t offset = 0;
  int buf_index = -1;  // index of `buf` in the registered buffer pool, or -1
  uint64_t tag = 0;    // returned with the completion
};

struct IoCompletion {
  uint64_t tag = 0;
  int64_t result = 0;  // bytes moved, or -errno
};

class IoEngine {
 public:
  virtual ~IoEngine() = default;
  virtual const char* name() const = 0;  // "io_uring" or "pread"
  // Queues one operation; the caller keeps at most the engine's depth
  // outstanding (queued or in flight, not yet reaped).
  virtual Status Queue(const IoOp& op) = 0;
  // Hands the queued operations to the kernel.
  virtual Status Submit() = 0;
  // Hands the queued operations to the kernel, then blocks (passively)
  // until at least `n` completions are ready for TryReap; `n` must not
  // exceed the operations outstanding. One wake-up for n completions: the
  // disk store waits for several at once rather than waking per read.
  virtual Status WaitReady(int n) = 0;
  // A completion if one is ready, without blocking.
  virtual bool TryReap(IoCompletion* out) = 0;
};

// An io_uring of `depth` entries. `pool`/`pool_bytes` split into `buffers`
// equal buffers are registered as fixed buffers when the kernel allows
// (IoOp::buf_index then selects read/write_fixed). Errors carry the
// io_uring_queue_init errno in the message; *refused is set when the kernel
// or a seccomp filter refuses io_uring itself (EPERM, ENOSYS), the case the
// caller falls back to pread for.
StatusOr<std::unique_ptr<IoEngine>> MakeUringEngine(int depth, char* pool, size_t buffer_bytes,
                                                    int buffers, bool* refused);
std::unique_ptr<IoEngine> MakePreadEngine();

}  // namespace foresight::storage::internal
