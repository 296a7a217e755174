// This machine's memory floors for the access patterns of the training
// phases, measured at a caller-chosen working-set size (a phase whose data
// fits in cache is compared with the cached rate, not DRAM's). Shared by
// memory_floors (one JSON line of rates) and phase_bench (per-phase ratios).
// Every routine runs on `pool` with fixed chunks and returns the best of
// `reps` timed runs after one untimed warm-up: the floor, not the average.
#pragma once

#include <cstdint>

#include "foresight/core/thread_pool.h"

namespace foresight::bench {

struct FloorOptions {
  ThreadPool* pool = nullptr;  // required
  int reps = 5;                // Default: 5
};

// Bytes/s reading a `bytes` buffer once (eight independent float sums).
double StreamReadRate(const FloorOptions& o, int64_t bytes);
// Bytes/s of b[i] = 2 * a[i] over two `bytes / 2` buffers, counting the
// read and the written bytes.
double StreamReadWriteRate(const FloorOptions& o, int64_t bytes);
// Bytes/s copying `picks` rows of `row_bytes` at uniform random ids of a
// [table_rows, row_bytes] table into a dense output, counting read and
// written bytes (feature gather).
double RowGatherRate(const FloorOptions& o, int64_t table_rows, int64_t row_bytes, int64_t picks);
// Bytes/s reading `picks` rows of `row_bytes` (a multiple of 32) at uniform
// random ids and summing them into one cache-resident row, counting read
// bytes only (the read side of an aggregation).
double RowReadRate(const FloorOptions& o, int64_t table_rows, int64_t row_bytes, int64_t picks);
// Independent random 8-byte reads per second over a `table_bytes` table
// (CSR lookups during sampling).
double RandomReadRate(const FloorOptions& o, int64_t table_bytes, int64_t lookups);

}  // namespace foresight::bench
