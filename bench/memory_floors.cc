// Measures this machine's memory rates for the access patterns of the
// training phases, so each phase can be compared with its own floor
// (its bytes / the rate of its pattern). Prints one JSON line.
//
//   build/bench/memory_floors [--threads 2] [--mib 512]
//
// Patterns (floors.h): streaming read (dropout, optimizer read side),
// streaming read+write (dropout, optimizer), random row gather of 512-byte
// rows (feature gather, aggregation), and independent random 8-byte reads
// (CSR indptr lookups during sampling), all over `mib` MiB buffers.
// bench/phase_bench measures the same patterns at each phase's own size.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "floors.h"

int main(int argc, char** argv) {
  int threads = 2;
  int64_t mib = 512;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0) threads = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--mib") == 0) mib = std::atoll(argv[i + 1]);
  }
  foresight::ThreadPool pool(threads);
  foresight::bench::FloorOptions o;
  o.pool = &pool;
  o.reps = 3;
  const int64_t bytes = mib << 20;
  const int64_t row = 512, rows = bytes / row;
  std::printf(
      "{\"bench\":\"memory_floors\",\"threads\":%d,\"mib\":%lld,"
      "\"stream_read_gbps\":%.2f,\"stream_read_write_gbps\":%.2f,"
      "\"gather_512b_rows_gbps\":%.2f,\"random_8b_reads_per_second\":%.4g}\n",
      threads, static_cast<long long>(mib), foresight::bench::StreamReadRate(o, bytes) / 1e9,
      foresight::bench::StreamReadWriteRate(o, 2 * bytes) / 1e9,
      foresight::bench::RowGatherRate(o, rows, row, std::min<int64_t>(rows, 1 << 17)) / 1e9,
      foresight::bench::RandomReadRate(o, bytes, 1 << 22));
  return 0;
}
