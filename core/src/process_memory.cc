#include "foresight/core/process_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace foresight {

int64_t CurrentRssBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  if (got != 2) return 0;
  return static_cast<int64_t>(resident) * ::sysconf(_SC_PAGESIZE);
}

int64_t PeakRssBytes() {
  struct rusage ru;
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

int64_t MinorFaults() {
  struct rusage ru;
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<int64_t>(ru.ru_minflt);
}

int64_t ProcStatusBytes(const std::string& field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  const std::string prefix = field + ":";
  int64_t bytes = 0;
  char line[512];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, prefix.c_str(), prefix.size()) != 0) continue;
    long long kb = 0;
    if (std::sscanf(line + prefix.size(), " %lld kB", &kb) == 1) bytes = static_cast<int64_t>(kb) * 1024;
    break;
  }
  std::fclose(f);
  return bytes;
}

int64_t MappedRssBytes(const std::string& dir) {
  // smaps names files by their canonical path: a relative or symlinked
  // `dir` (a dataset given as "run/data") must be resolved, or nothing
  // under it is found.
  std::string canonical = dir;
  if (char* resolved = ::realpath(dir.c_str(), nullptr); resolved != nullptr) {
    canonical = resolved;
    std::free(resolved);
  }
  FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) return 0;
  const std::string prefix = canonical.empty() || canonical.back() == '/' ? canonical : canonical + "/";
  int64_t total = 0;
  bool in_dir = false;
  char line[4096];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    long long kb = 0;
    if (std::sscanf(line, "Rss: %lld kB", &kb) == 1) {
      if (in_dir) total += kb * 1024;
      continue;
    }
    // A mapping's header: "start-end perms offset dev inode [path]".
    unsigned long long start = 0, end = 0;
    if (std::sscanf(line, "%llx-%llx ", &start, &end) == 2) {
      const char* slash = std::strchr(line, '/');
      in_dir = slash != nullptr && !prefix.empty() && std::strncmp(slash, prefix.c_str(), prefix.size()) == 0;
    }
  }
  std::fclose(f);
  return total;
}

}  // namespace foresight
