// The `foresight` command-line tool; cli.cc has the subcommand table.
#include "cli.h"

#include <malloc.h>

int main(int argc, char** argv) {
  // glibc raises its mmap threshold to 32 MiB after the first large free, so
  // later 1-32 MiB tensors (every step's activations) come from the heap,
  // which then fragments and keeps freed memory: about 100 MB of RSS on the
  // 1M-node SAGE benchmark. A fixed 128 KiB threshold returns big blocks to
  // the kernel on free, which keeps peak RSS within --memory-budget.
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
  return foresight::apps::RunCli(argc, argv);
}
