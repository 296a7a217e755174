// Giving back the pages of read-only file mappings: a reader that touches a
// few rows of a mapped array per step (the sampler on a dataset's CSR)
// drops its page-table entries after the step, so the array counts in this
// process's resident set only for what the step touched, not for
// everything read since the mapping was made. The bytes stay in the page
// cache (the kernel's reclaimable memory); the next read of a released
// page faults it back from there, or from the file, unchanged.
#pragma once

#include <cstddef>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight {

// OK when every byte of [p, p + bytes) lies in read-only shared mappings of
// files of this process (/proc/self/maps); FailedPrecondition naming `what`
// and the first page that does not (anonymous or writable memory would
// lose its contents on release). Costs a read of /proc/self/maps: call
// once per array, not per step.
Status CheckReleasableMapping(const void* p, size_t bytes, const std::string& what);
// The same for a tensor's bytes (an undefined or empty tensor is OK).
Status CheckReleasableMapping(const Tensor& t, const std::string& what);

// Drops this process's page-table entries for every page that holds a byte
// of [p, p + bytes) (madvise MADV_DONTNEED). Only for ranges that
// CheckReleasableMapping accepted (it checks those whole pages). Thread-safe: a concurrent reader of a
// released page faults it back.
void ReleaseMappedPages(const void* p, size_t bytes);
void ReleaseMappedPages(const Tensor& t);

// The opposite: reads one byte of every page of [p, p + bytes), so that a
// mapped array a run will read at random (a resident topology's CSR, the
// labels) is mapped into this process before the run's first epoch rather
// than fault by fault inside it (the first epoch of the speed run was the
// slow one, bench/RESULTS.md, issue 19). Works on any readable memory;
// returns the pages touched.
int64_t TouchPages(const void* p, size_t bytes);
int64_t TouchPages(const Tensor& t);

}  // namespace foresight
