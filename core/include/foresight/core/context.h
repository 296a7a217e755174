// ExecContext: what every op receives besides its tensors: the device it runs
// on, the CPU budget (thread pool), a stream slot (CUDA stream index), a
// reusable scratch workspace and the RNG stream. A CUDA implementation finds
// everything it needs here, so op signatures never grow device parameters.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "foresight/core/device.h"
#include "foresight/core/rng.h"
#include "foresight/core/status.h"
#include "foresight/core/thread_pool.h"

namespace foresight {

// Scratch memory reused across ops on one context; not thread-safe (one
// context per pipeline stage).
class Workspace {
 public:
  explicit Workspace(Device device = Device::Cpu()) : device_(device) {}
  ~Workspace();
  // Returns at least `bytes` of memory valid until the next Get().
  StatusOr<void*> Get(size_t bytes);
  Device device() const { return device_; }

 private:
  Device device_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

struct ExecContext {
  Device device = Device::Cpu();
  ThreadPool* pool = nullptr;      // never null once built by MakeContext
  int stream_slot = 0;             // CUDA stream index; unused on CPU
  Workspace* workspace = nullptr;  // may be null: ops then allocate
  RngKey rng;                      // stream for ops that draw random numbers
  bool deterministic = true;       // reductions in fixed order
  // CUDA Gemm may round its inputs to TF32 (10-bit mantissa) on tensor
  // cores: several times the f32 rate, about 1e-3 relative error. Default: false
  bool allow_tf32 = false;

  ExecContext WithRng(RngKey key) const {
    ExecContext c = *this;
    c.rng = key;
    return c;
  }
};

// A CPU context on the default pool with an RNG stream from `seed`.
ExecContext CpuContext(uint64_t seed = 0, ThreadPool* pool = nullptr);

}  // namespace foresight
