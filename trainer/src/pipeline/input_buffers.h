// InputBuffers: the cached row path's batch inputs x (f32 [rows, F]) in
// blocks that are used again, batch after batch. A fresh x from the
// allocator each batch was faulted in, and under THP zeroed, on every first
// write: on the community graph (19 MB an x) that was a tenth of the disk
// epoch's CPU, because x's size changes from batch to batch and the host
// cache's size classes released the block a batch before freed rather than
// hand it to the next one. Here a batch's x takes the smallest free block
// that holds it; when none does, the largest free block is released first,
// so the pool never holds more blocks than there were x alive at once (the
// memory plan's x term bounds those). A block returns to the pool when the
// last reference to its x goes, whichever thread drops it; the pool's state
// outlives the InputBuffers while any x is alive. Blocks are sized to the
// request plus an eighth (only the pages written become resident), so a
// batch slightly larger than the last one still reuses its block.
// Thread-safe. Private to the trainer.
#pragma once

#include <cstdint>
#include <memory>

#include "foresight/core/tensor.h"

namespace foresight::trainer::internal {

struct InputBufferStats {
  int64_t taken = 0;     // x handed out
  int64_t reused = 0;    // of which from a free block
  int64_t blocks = 0;    // blocks allocated and not released (free or live)
  int64_t released = 0;  // blocks given back to the allocator (too small)
};

class InputBuffers {
 public:
  InputBuffers();
  ~InputBuffers();
  InputBuffers(const InputBuffers&) = delete;
  InputBuffers& operator=(const InputBuffers&) = delete;

  // A contiguous f32 host tensor [rows, width], contents unspecified.
  // ResourceExhausted naming the size when the host is out of memory.
  StatusOr<Tensor> Take(int64_t rows, int64_t width);
  // Allocates `blocks` free blocks that each hold [rows, width] floats and
  // writes every page of them, so they are resident from the start. Under
  // a memory budget the plan counts the x of every batch that can be alive
  // at once; without this the run holds that many only when compute is the
  // slowest stage (when reads are, two fewer: 0.77 of a budget instead of
  // 1.02 on memory_peak_cli_test's graph), and what the plan reserved is
  // neither used nor given to the cache. ResourceExhausted when the host
  // is out of memory.
  Status Reserve(int blocks, int64_t rows, int64_t width);
  InputBufferStats stats() const;

 private:
  struct Pool;
  std::shared_ptr<Pool> pool_;
};

}  // namespace foresight::trainer::internal
