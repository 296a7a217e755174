// The gradient exchange alone: under `mpirun -np N`, the time of one
// AllReduceSum of BYTES of f32 after a barrier (so waiting for a slower
// rank is not counted), median over ITERS. Rank 0 prints one JSON line.
//   mpirun -np 3 build/bench/allreduce_bench [BYTES=148032] [ITERS=200]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "foresight/core/communicator.h"

int main(int argc, char** argv) {
  const long bytes = argc > 1 ? std::atol(argv[1]) : 148032;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 200;
  foresight::StatusOr<foresight::Communicator*> world = foresight::WorldCommunicator();
  if (!world.ok()) {
    std::fprintf(stderr, "%s\n", world.status().ToString().c_str());
    return 1;
  }
  foresight::Communicator& c = **world;
  std::vector<float> data(static_cast<size_t>(bytes / 4), 1.0f);
  std::vector<double> seconds;
  for (int i = 0; i < iters; ++i) {
    if (!c.Barrier().ok()) return 1;
    const auto start = std::chrono::steady_clock::now();
    if (!c.AllReduceSum(data.data(), static_cast<int64_t>(data.size())).ok()) return 1;
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  if (c.rank() == 0) {
    std::printf("{\"ranks\": %d, \"bytes\": %ld, \"iters\": %d, \"median_us\": %.1f, \"p90_us\": %.1f}\n", c.size(),
                bytes, iters, seconds[seconds.size() / 2] * 1e6, seconds[seconds.size() * 9 / 10] * 1e6);
  }
  return 0;
}
