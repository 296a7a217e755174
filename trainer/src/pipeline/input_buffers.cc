#include "input_buffers.h"

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "foresight/core/allocator.h"

namespace foresight::trainer::internal {

struct InputBuffers::Pool {
  struct Block {
    void* data;
    size_t bytes;
  };
  std::mutex mu;
  std::vector<Block> free;  // blocks no x uses
  InputBufferStats stats;

  ~Pool() {
    for (const Block& b : free) UncachedHostAllocator()->Deallocate(b.data, b.bytes);
  }
  void GiveBack(void* data, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu);
    free.push_back({data, bytes});
  }  // A new block for x of `need` bytes (plus an eighth: only the pages
  // written become resident), counted in stats.blocks.
  StatusOr<Block> NewBlock(size_t need, int64_t rows) {
    const size_t bytes = need + need / 8;
    StatusOr<void*> p = UncachedHostAllocator()->Allocate(bytes == 0 ? sizeof(float) : bytes);
    if (!p.ok()) return p.status().WithContext("batch input x of " + std::to_string(rows) + " rows");
    std::lock_guard<std::mutex> lock(mu);
    ++stats.blocks;
    return Block{*p, bytes};
  }
};

InputBuffers::InputBuffers() : pool_(std::make_shared<Pool>()) {}

InputBuffers::~InputBuffers() = default;

StatusOr<Tensor> InputBuffers::Take(int64_t rows, int64_t width) {
  if (rows < 0 || width <= 0) {
    return InvalidArgument("input buffer of " + std::to_string(rows) + " x " + std::to_string(width) + " floats");
  }
  const size_t need = static_cast<size_t>(rows * width) * sizeof(float);
  Pool::Block block{nullptr, 0};
  {
    std::lock_guard<std::mutex> lock(pool_->mu);
    ++pool_->stats.taken;
    std::vector<Pool::Block>& free = pool_->free;
    size_t best = free.size(), largest = free.size();
    for (size_t i = 0; i < free.size(); ++i) {
      if (free[i].bytes >= need && (best == free.size() || free[i].bytes < free[best].bytes)) best = i;
      if (largest == free.size() || free[i].bytes > free[largest].bytes) largest = i;
    }
    if (best != free.size()) {
      block = free[best];
      free.erase(free.begin() + static_cast<std::ptrdiff_t>(best));
      ++pool_->stats.reused;
    } else if (largest != free.size()) {
      // Every free block is too small: the largest goes, so the new one
      // takes its place rather than adding to the blocks held.
      UncachedHostAllocator()->Deallocate(free[largest].data, free[largest].bytes);
      free.erase(free.begin() + static_cast<std::ptrdiff_t>(largest));
      ++pool_->stats.released;
      --pool_->stats.blocks;
    }
  }
  if (block.data == nullptr) {
    FS_ASSIGN_OR_RETURN(block, pool_->NewBlock(need, rows));
  }
  // The block goes back to the pool (which outlives this object while
  // blocks are out) when the last tensor viewing it is dropped.
  std::shared_ptr<Pool> pool = pool_;
  const size_t bytes = block.bytes;
  std::shared_ptr<void> owner(block.data, [pool, bytes](void* data) { pool->GiveBack(data, bytes); });
  auto storage = Storage::Wrap(block.data, need, Device::Cpu(), MemoryKind::kHost, std::move(owner));
  return Tensor::View(std::move(storage), 0, {rows, width}, {width, 1}, DType::kF32);
}

Status InputBuffers::Reserve(int blocks, int64_t rows, int64_t width) {
  if (blocks < 0 || rows < 0 || width <= 0) {
    return InvalidArgument("input buffers: " + std::to_string(blocks) + " blocks of " + std::to_string(rows) + " x " +
                           std::to_string(width) + " floats");
  }
  const size_t need = static_cast<size_t>(rows * width) * sizeof(float);
  if (need == 0) return Status::OK();
  for (int i = 0; i < blocks; ++i) {
    // Sized as Take sizes a block for `rows`. The plan counts `need`; the
    // eighth above it becomes resident only where a larger batch writes it.
    FS_ASSIGN_OR_RETURN(const Pool::Block block, pool_->NewBlock(need, rows));
    std::memset(block.data, 0, need);
    pool_->GiveBack(block.data, block.bytes);
  }
  return Status::OK();
}

InputBufferStats InputBuffers::stats() const {
  std::lock_guard<std::mutex> lock(pool_->mu);
  return pool_->stats;
}

}  // namespace foresight::trainer::internal
