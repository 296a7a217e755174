#include "foresight/core/context.h"

#include <cstdlib>

#include "foresight/core/allocator.h"

namespace foresight {

Workspace::~Workspace() {
  if (data_ != nullptr) {
    auto a = AllocatorFor(device_);
    if (a.ok()) (*a)->Deallocate(data_, bytes_);
  }
}

StatusOr<void*> Workspace::Get(size_t bytes) {
  if (bytes <= bytes_ && data_ != nullptr) return data_;
  FS_ASSIGN_OR_RETURN(Allocator * a, AllocatorFor(device_));
  if (data_ != nullptr) a->Deallocate(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
  const size_t grown = bytes + bytes / 2;  // amortise growth
  FS_ASSIGN_OR_RETURN(data_, a->Allocate(grown));
  bytes_ = grown;
  return data_;
}

ExecContext CpuContext(uint64_t seed, ThreadPool* pool) {
  ExecContext c;
  c.device = Device::Cpu();
  c.pool = pool != nullptr ? pool : DefaultThreadPool();
  c.rng = RngKey::FromSeed(seed);
  return c;
}

}  // namespace foresight
