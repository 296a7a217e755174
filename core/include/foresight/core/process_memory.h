// The process's memory as the kernel counts it (Linux /proc and getrusage),
// for memory budgets, plans and reports. Each returns 0 when unknown.
#pragma once

#include <cstdint>
#include <string>

namespace foresight {

// Resident set now (/proc/self/statm), bytes.
int64_t CurrentRssBytes();
// Peak resident set so far (getrusage ru_maxrss), bytes.
int64_t PeakRssBytes();
// Minor page faults of the process so far (getrusage ru_minflt): each first
// touch of a fresh anonymous page (a new allocation the kernel must zero)
// counts one, so a steady state that reuses its buffers adds few.
int64_t MinorFaults();
// A "Name: N kB" field of /proc/self/status in bytes, e.g. "RssAnon"
// (anonymous pages resident) or "RssFile" (file pages mapped).
int64_t ProcStatusBytes(const std::string& field);
// Resident bytes of this process's file mappings under `dir`
// (/proc/self/smaps), e.g. a dataset's mmap'd arrays. `dir` may be
// relative or reached through symlinks.
int64_t MappedRssBytes(const std::string& dir);

}  // namespace foresight
