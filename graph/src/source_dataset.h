// The dataset being partitioned, opened for streaming: its manifest, every
// array's header (checked against the manifest), indptr loaded and checked
// (O(N) memory), and a chunked reader of the CSR rows whose neighbour ids are
// range-checked as they are read. Nothing is mmap'd, so reading the graph
// never adds its size to the process's RSS. Private to the graph module.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/storage/dataset.h"
#include "partition_io.h"

namespace foresight::graph::internal {

struct SourceDataset {
  std::string dir;
  storage::DatasetManifest manifest;
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  std::vector<int64_t> indptr;  // N + 1, validated: 0 .. E, non-decreasing
  int64_t max_degree = 0;
  SourceArray indices;          // i32 or i64 [E]
  SourceArray features;         // f32 or f16 [N, F]
  SourceArray labels;           // i32 or i64 [N]
  SourceArray train_ids, val_ids, test_ids;  // i64 [*]
  std::optional<SourceArray> original_ids;   // i64 [N] or |S<w> [N]
  bool indices_i64() const { return indices.info().dtype == DType::kI64; }
};

// Opens `dir`. Errors name the file and what was expected; an array the
// partitioner does not know how to renumber is refused (Unimplemented).
StatusOr<SourceDataset> OpenSourceDataset(const std::string& dir);

// Reads CSR rows in order, whole rows per chunk, about `chunk_edges` edges a
// chunk (more when one row is longer). Not thread-safe.
class CsrChunkReader {
 public:
  CsrChunkReader(const SourceDataset& src, int64_t chunk_edges);
  // Reads the next chunk: rows [*begin, *end) with their neighbours at
  // data<T>() (T = int32_t or int64_t as src.indices_i64()), position
  // indptr[r] - indptr[*begin] for row r. False once all rows were read.
  // DataLoss when a neighbour id is outside [0, N).
  StatusOr<bool> Next(int64_t* begin, int64_t* end);
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(buf_.data()); }

 private:
  const SourceDataset& src_;
  int64_t chunk_edges_;
  int64_t row_ = 0;
  std::vector<int64_t> buf_;  // 8-byte aligned storage for i32 or i64 ids
};

// Edge count of the chunk budget `bytes` for this dataset's index width.
int64_t ChunkEdgesFor(const SourceDataset& src, size_t bytes);

// Streams every row in order through a CsrChunkReader of `chunk_bytes`:
// visit(v, first, last) gets row v's in-neighbours [first, last) (T as
// src.indices_i64()). A non-OK Status from visit stops the walk and is
// returned; so is a read error.
template <typename T, typename Visit>
Status ForEachRow(const SourceDataset& src, size_t chunk_bytes, Visit&& visit) {
  CsrChunkReader reader(src, ChunkEdgesFor(src, chunk_bytes));
  const int64_t* indptr = src.indptr.data();
  int64_t begin = 0, end = 0;
  while (true) {
    FS_ASSIGN_OR_RETURN(bool more, reader.Next(&begin, &end));
    if (!more) return Status::OK();
    const T* ids = reader.data<T>();
    const int64_t base = indptr[begin];
    for (int64_t v = begin; v < end; ++v) {
      FS_RETURN_IF_ERROR(visit(v, ids + (indptr[v] - base), ids + (indptr[v + 1] - base)));
    }
  }
}

}  // namespace foresight::graph::internal
