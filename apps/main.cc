// The `foresight` command-line tool; cli.cc has the subcommand table.
#include "cli.h"

#include <malloc.h>

int main(int argc, char** argv) {
  // glibc raises its mmap threshold to 32 MiB after the first large free, so
  // later 1-32 MiB tensors (every step's activations) come from the heap,
  // which then fragments and keeps freed memory: about 100 MB of RSS on the
  // 1M-node SAGE benchmark. A fixed threshold returns big blocks to the
  // kernel on free, which keeps peak RSS within --memory-budget. It is
  // 4 MiB, not lower: oneDNN's sgemm allocates its packing buffers on every
  // call, and below their size each call mapped, faulted in and unmapped
  // them (DLRM speed shape: 324k page faults an epoch against 33k, 7% more
  // training CPU, and TLB shootdowns between the two cores). The trim
  // threshold keeps the heap's top from being handed back and faulted in
  // again between two calls.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
  return foresight::apps::RunCli(argc, argv);
}
