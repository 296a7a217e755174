#include "foresight/core/mapped_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace foresight {

namespace {

uintptr_t PageSize() { return static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE)); }

std::string Hex(uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%" PRIxPTR, v);
  return buf;
}

}  // namespace

Status CheckReleasableMapping(const void* p, size_t bytes, const std::string& what) {
  if (bytes == 0) return Status::OK();
  const uintptr_t page = PageSize();
  uintptr_t need = reinterpret_cast<uintptr_t>(p) / page * page;  // first page not yet covered
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) return IoError("CheckReleasableMapping: cannot read /proc/self/maps for " + what);
  // Lines are sorted by address: "start-end perms offset dev inode [path]".
  char line[4096];
  while (need < end && std::fgets(line, sizeof(line), f) != nullptr) {
    unsigned long long start = 0, stop = 0, inode = 0;
    char perms[8] = {0};
    unsigned long long offset = 0;
    char dev[32] = {0};
    if (std::sscanf(line, "%llx-%llx %7s %llx %31s %llu", &start, &stop, perms, &offset, dev, &inode) != 6) continue;
    if (stop <= need) continue;
    if (start > need) break;  // a hole at `need`
    // Read-only, shared, backed by a file: releasing loses nothing.
    if (perms[0] != 'r' || perms[1] != '-' || perms[3] != 's' || inode == 0) break;
    need = stop;
  }
  std::fclose(f);
  if (need < end) {
    return FailedPrecondition(what + ": the page at " + Hex(need) +
                              " is not in a read-only shared file mapping, so its pages cannot be given back "
                              "without losing them (expected a dataset array mapped from its .npy file)");
  }
  return Status::OK();
}

Status CheckReleasableMapping(const Tensor& t, const std::string& what) {
  if (!t.defined() || t.nbytes() == 0) return Status::OK();
  return CheckReleasableMapping(t.raw_data(), t.nbytes(), what);
}

void ReleaseMappedPages(const void* p, size_t bytes) {
  const uintptr_t page = PageSize();
  // Outward to whole pages: the check covered the pages at both ends, and
  // giving back a page that also holds a neighbour's bytes loses nothing.
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) / page * page;
  // Advice on a checked mapping cannot fail in a way that loses data: at
  // worst the pages stay mapped.
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void ReleaseMappedPages(const Tensor& t) {
  if (t.defined() && t.nbytes() > 0) ReleaseMappedPages(t.raw_data(), t.nbytes());
}

int64_t TouchPages(const void* p, size_t bytes) {
  if (bytes == 0) return 0;
  const uintptr_t page = PageSize();
  const uintptr_t first = reinterpret_cast<uintptr_t>(p);
  const uintptr_t end = first + bytes;
  // The first byte, then the first byte of every later page: all in range.
  volatile uint8_t sink = 0;
  int64_t pages = 0;
  for (uintptr_t at = first; at < end; at = (at / page + 1) * page) {
    sink = sink ^ *reinterpret_cast<const volatile uint8_t*>(at);
    ++pages;
  }
  (void)sink;
  return pages;
}

int64_t TouchPages(const Tensor& t) {
  return t.defined() && t.nbytes() > 0 ? TouchPages(t.raw_data(), t.nbytes()) : 0;
}

}  // namespace foresight
