#include "renumber.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

#include "foresight/core/progress.h"
#include "foresight/storage/dataset.h"
#include "partition_io.h"

namespace foresight::graph::internal {
namespace {

// Rows per parallel task when mapping and sorting neighbour lists.
constexpr int64_t kRowGrain = 2048;

// Node chunks for NewIds: fixed by N and P (never by the thread count), and
// few enough that the chunk x partition count table stays small.
int64_t NodeGrain(int64_t n, int parts) {
  const int64_t max_chunks = std::max<int64_t>(1, (int64_t(1) << 22) / std::max(parts, 1));
  return std::max<int64_t>(int64_t(1) << 16, (n + max_chunks - 1) / max_chunks);
}

// Appends rows [0, count) of `rows` (row_bytes each, node ids first..) to
// their partitions' regions, one Append per run of same-partition rows.
Status AppendRows(RegionWriter* w, const int32_t* part, int64_t first, int64_t count, const char* rows,
                  size_t row_bytes) {
  int64_t i = 0;
  while (i < count) {
    const int32_t p = part[first + i];
    int64_t j = i + 1;
    while (j < count && part[first + j] == p) ++j;
    FS_RETURN_IF_ERROR(w->Append(p, rows + static_cast<size_t>(i) * row_bytes,
                                 static_cast<size_t>(j - i) * row_bytes));
    i = j;
  }
  return Status::OK();
}

size_t RegionBuffer(const RenumberOptions& o, size_t parts) {
  return std::max<size_t>(size_t{4096}, o.write_buffer_bytes / std::max<size_t>(parts, 1));
}

// A ScatterWriter holds its buffer and, while writing, a merged copy of up
// to the same size: half the write budget each.
size_t ScatterBuffer(const RenumberOptions& o) { return std::max<size_t>(size_t{4096}, o.write_buffer_bytes / 2); }

// Runs of rows [i, j) of a chunk whose new ids are consecutive (rows
// placed by a node order): visit(i, j) for each, in chunk order.
template <typename Visit>
Status ForEachPlacedRun(const int64_t* new_id, int64_t first, int64_t count, Visit&& visit) {
  int64_t i = 0;
  while (i < count) {
    int64_t j = i + 1;
    while (j < count && new_id[first + j] == new_id[first + i] + (j - i)) ++j;
    FS_RETURN_IF_ERROR(visit(i, j));
    i = j;
  }
  return Status::OK();
}

// A node array (one row per node) in new order: rows come from `read`
// (rows [first, first + count) of the old order into a buffer). `placed`:
// the new ids when a node order places rows inside their partitions; null
// when every partition keeps old order (rows appended to its region).
Status ScatterNodeRows(const std::function<Status(int64_t, int64_t, void*)>& read,
                       const storage::NpyInfo& like, const Shape& shape, size_t row_bytes,
                       const std::vector<int32_t>& part, const std::vector<int64_t>& offsets,
                       const std::vector<int64_t>* placed, const RenumberOptions& o, const std::string& path) {
  const int64_t n = static_cast<int64_t>(part.size());
  FS_ASSIGN_OR_RETURN(auto out, OutputArray::Create(path, like, shape));
  if (out->data_bytes() == 0) return out->Finish();
  const int64_t chunk_rows = std::max<int64_t>(1, static_cast<int64_t>(o.read_chunk_bytes / row_bytes));
  std::vector<char> buf(static_cast<size_t>(std::min(chunk_rows, n)) * row_bytes);
  if (placed != nullptr) {
    ScatterWriter writer(out.get(), ScatterBuffer(o));
    for (int64_t first = 0; first < n; first += chunk_rows) {
      const int64_t count = std::min(chunk_rows, n - first);
      FS_RETURN_IF_ERROR(read(first, count, buf.data()));
      FS_RETURN_IF_ERROR(ForEachPlacedRun(placed->data(), first, count, [&](int64_t i, int64_t j) {
        return writer.Put(static_cast<uint64_t>((*placed)[first + i]) * row_bytes, buf.data() + i * row_bytes,
                          static_cast<size_t>(j - i) * row_bytes);
      }));
    }
    FS_RETURN_IF_ERROR(writer.Finish());
    return out->Finish();
  }
  std::vector<uint64_t> begin(offsets.size());
  for (size_t p = 0; p < offsets.size(); ++p) begin[p] = static_cast<uint64_t>(offsets[p]) * row_bytes;
  RegionWriter writer(out.get(), std::move(begin), RegionBuffer(o, offsets.size() - 1));
  for (int64_t first = 0; first < n; first += chunk_rows) {
    const int64_t count = std::min(chunk_rows, n - first);
    FS_RETURN_IF_ERROR(read(first, count, buf.data()));
    FS_RETURN_IF_ERROR(AppendRows(&writer, part.data(), first, count, buf.data(), row_bytes));
  }
  FS_RETURN_IF_ERROR(writer.Finish());
  return out->Finish();
}

Status WriteNodeArray(const SourceArray& src, const std::vector<int32_t>& part,
                      const std::vector<int64_t>& offsets, const std::vector<int64_t>* placed,
                      const RenumberOptions& o, const std::string& path) {
  return ScatterNodeRows(
      [&src](int64_t first, int64_t count, void* buf) { return src.ReadRows(first, count, buf); },
      src.info(), src.info().shape, src.row_bytes(), part, offsets, placed, o, path);
}

// Split ids (O(#ids) in memory): each id mapped, order kept.
Status WriteSplit(const SourceArray& src, const std::vector<int64_t>& new_id, const std::string& path) {
  const int64_t n = static_cast<int64_t>(new_id.size());
  std::vector<int64_t> ids(static_cast<size_t>(src.rows()));
  FS_RETURN_IF_ERROR(src.ReadRows(0, src.rows(), ids.data()));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= n) {
      return DataLoss(src.path() + ": position " + std::to_string(i) + ": node id " + std::to_string(ids[i]) +
                      " is not in [0, " + std::to_string(n) + ")");
    }
    ids[i] = new_id[static_cast<size_t>(ids[i])];
  }
  FS_ASSIGN_OR_RETURN(auto out, OutputArray::Create(path, src.info(), src.info().shape));
  FS_RETURN_IF_ERROR(out->WriteAt(0, ids.data(), ids.size() * sizeof(int64_t)));
  return out->Finish();
}

// indices: rows read in chunks, neighbours mapped and sorted over the pool,
// rows appended to their partitions' regions; counts the edge cut.
template <typename T>
Status WriteIndices(const SourceDataset& src, const std::vector<int32_t>& part,
                    const std::vector<int64_t>& offsets, const std::vector<int64_t>& new_id,
                    const std::vector<int64_t>& new_indptr, bool placed, const RenumberOptions& o,
                    const std::string& path, int64_t* edge_cut) {
  FS_ASSIGN_OR_RETURN(auto out, OutputArray::Create(path, src.indices.info(), src.indices.info().shape));
  if (out->data_bytes() == 0) return out->Finish();
  const size_t parts = offsets.size() - 1;
  std::vector<uint64_t> begin(parts + 1);
  for (size_t p = 0; p <= parts; ++p) {
    begin[p] = static_cast<uint64_t>(new_indptr[static_cast<size_t>(offsets[p])]) * sizeof(T);
  }
  RegionWriter writer(out.get(), std::move(begin), RegionBuffer(o, parts));
  ScatterWriter scatter(out.get(), placed ? ScatterBuffer(o) : 0);
  CsrChunkReader reader(src, ChunkEdgesFor(src, o.read_chunk_bytes));
  const int64_t* indptr = src.indptr.data();
  const int32_t* pt = part.data();
  const int64_t* nid = new_id.data();
  // Sized once (see CsrChunkReader).
  std::vector<T> mapped(static_cast<size_t>(
      std::min(src.num_edges, std::max(ChunkEdgesFor(src, o.read_chunk_bytes), src.max_degree))));
  std::vector<int64_t> cut;
  ProgressOptions po;
  po.unit = "nodes";
  Progress progress("renumber edges", src.num_nodes, po);
  int64_t begin_row = 0, end_row = 0;
  while (true) {
    FS_ASSIGN_OR_RETURN(bool more, reader.Next(&begin_row, &end_row));
    if (!more) break;
    const T* ids = reader.data<T>();
    const int64_t base = indptr[begin_row];
    const int64_t count = indptr[end_row] - base;
    if (static_cast<int64_t>(mapped.size()) < count) return Internal("renumber: chunk larger than its buffer");
    const int64_t rows = end_row - begin_row;
    cut.assign(static_cast<size_t>(ThreadPool::NumChunks(rows, kRowGrain)), 0);
    T* m = mapped.data();
    o.pool->ParallelForChunks(rows, kRowGrain, [&](int64_t c, int64_t rb, int64_t re) {
      int64_t local_cut = 0;
      for (int64_t v = begin_row + rb; v < begin_row + re; ++v) {
        const int32_t pv = pt[v];
        const int64_t kb = indptr[v] - base, ke = indptr[v + 1] - base;
        for (int64_t k = kb; k < ke; ++k) {
          const int64_t u = static_cast<int64_t>(ids[k]);
          local_cut += pt[u] != pv;
          m[k] = static_cast<T>(nid[u]);
        }
        std::sort(m + kb, m + ke);
      }
      cut[static_cast<size_t>(c)] = local_cut;
    });
    for (int64_t c : cut) *edge_cut += c;
    if (placed) {  // rows with consecutive new ids are one run
      FS_RETURN_IF_ERROR(ForEachPlacedRun(nid, begin_row, rows, [&](int64_t i, int64_t j) {
        const int64_t v = begin_row + i, w = begin_row + j;
        return scatter.Put(static_cast<uint64_t>(new_indptr[static_cast<size_t>(nid[v])]) * sizeof(T),
                           m + (indptr[v] - base), static_cast<size_t>(indptr[w] - indptr[v]) * sizeof(T));
      }));
      progress.Advance(rows);
      continue;
    }
    // Rows of one partition that are neighbours in old order are one run.
    int64_t v = begin_row;
    while (v < end_row) {
      const int32_t p = pt[v];
      int64_t w = v + 1;
      while (w < end_row && pt[w] == p) ++w;
      FS_RETURN_IF_ERROR(writer.Append(p, m + (indptr[v] - base),
                                       static_cast<size_t>(indptr[w] - indptr[v]) * sizeof(T)));
      v = w;
    }
    progress.Advance(rows);
  }
  progress.Finish("");
  FS_RETURN_IF_ERROR(placed ? scatter.Finish() : writer.Finish());
  return out->Finish();
}

}  // namespace

StatusOr<std::vector<int64_t>> PartitionOffsets(const std::vector<int32_t>& part, int parts) {
  std::vector<int64_t> offsets(static_cast<size_t>(parts) + 1, 0);
  for (size_t v = 0; v < part.size(); ++v) {
    const int32_t p = part[v];
    if (p < 0 || p >= parts) {
      return Internal("node " + std::to_string(v) + " was assigned partition " + std::to_string(p) +
                      ", not in [0, " + std::to_string(parts) + ")");
    }
    ++offsets[static_cast<size_t>(p) + 1];
  }
  for (int p = 0; p < parts; ++p) offsets[p + 1] += offsets[p];
  return offsets;
}

std::vector<int64_t> NewIds(const std::vector<int32_t>& part, const std::vector<int64_t>& offsets,
                            ThreadPool* pool) {
  const int64_t n = static_cast<int64_t>(part.size());
  const int parts = static_cast<int>(offsets.size()) - 1;
  const int64_t grain = NodeGrain(n, parts);
  const int64_t chunks = ThreadPool::NumChunks(n, grain);
  // next[c * P + p]: the first new id of partition p's nodes in chunk c.
  std::vector<int64_t> next(static_cast<size_t>(chunks * parts), 0);
  pool->ParallelForChunks(n, grain, [&](int64_t c, int64_t b, int64_t e) {
    int64_t* cnt = next.data() + c * parts;
    for (int64_t v = b; v < e; ++v) ++cnt[part[v]];
  });
  for (int p = 0; p < parts; ++p) {
    int64_t at = offsets[p];
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t k = next[c * parts + p];
      next[c * parts + p] = at;
      at += k;
    }
  }
  std::vector<int64_t> new_id(static_cast<size_t>(n));
  pool->ParallelForChunks(n, grain, [&](int64_t c, int64_t b, int64_t e) {
    int64_t* at = next.data() + c * parts;
    for (int64_t v = b; v < e; ++v) new_id[v] = at[part[v]]++;
  });
  return new_id;
}

double Balance(const std::vector<int64_t>& offsets) {
  const int parts = static_cast<int>(offsets.size()) - 1;
  if (parts <= 0 || offsets.back() == 0) return 1.0;
  int64_t largest = 0;
  for (int p = 0; p < parts; ++p) largest = std::max(largest, offsets[p + 1] - offsets[p]);
  return static_cast<double>(largest) * parts / static_cast<double>(offsets.back());
}

Status WriteRenumbered(const SourceDataset& src, const std::vector<int32_t>& part,
                       const std::vector<int64_t>& offsets, const std::vector<int64_t>& rank,
                       const RenumberOptions& o, const std::string& out_dir, RenumberResult* result) {
  const int64_t n = src.num_nodes;
  const bool ordered = !rank.empty();
  std::vector<int64_t> new_id;
  if (ordered) {
    if (static_cast<int64_t>(rank.size()) != n) {
      return Internal("renumber: ranks for " + std::to_string(rank.size()) + " of " + std::to_string(n) + " nodes");
    }
    new_id.resize(static_cast<size_t>(n));
    std::vector<bool> taken(static_cast<size_t>(n), false);
    for (int64_t v = 0; v < n; ++v) {
      const int64_t p = part[v];
      if (rank[v] < 0 || rank[v] >= offsets[p + 1] - offsets[p] || taken[offsets[p] + rank[v]]) {
        return Internal("renumber: node " + std::to_string(v) + " has rank " + std::to_string(rank[v]) +
                        " in partition " + std::to_string(p) + ", not a free place of its " +
                        std::to_string(offsets[p + 1] - offsets[p]));
      }
      new_id[v] = offsets[p] + rank[v];
      taken[new_id[v]] = true;
    }
  } else {
    new_id = NewIds(part, offsets, o.pool);
  }
  const std::vector<int64_t>* placed = ordered ? &new_id : nullptr;
  const auto path = [&out_dir](const char* file) { return out_dir + "/" + file; };

  // indptr: row new_id[v] has v's degree.
  {
    std::vector<int64_t> new_indptr(static_cast<size_t>(n) + 1, 0);
    for (int64_t v = 0; v < n; ++v) new_indptr[new_id[v] + 1] = src.indptr[v + 1] - src.indptr[v];
    for (int64_t i = 0; i < n; ++i) new_indptr[i + 1] += new_indptr[i];
    storage::NpyInfo i64;
    i64.dtype = DType::kI64;
    i64.item_size = 8;
    FS_ASSIGN_OR_RETURN(auto out, OutputArray::Create(path(storage::kIndptrFile), i64, {n + 1}));
    FS_RETURN_IF_ERROR(out->WriteAt(0, new_indptr.data(), new_indptr.size() * sizeof(int64_t)));
    FS_RETURN_IF_ERROR(out->Finish());
    result->edge_cut = 0;
    if (src.indices_i64()) {
      FS_RETURN_IF_ERROR(WriteIndices<int64_t>(src, part, offsets, new_id, new_indptr, ordered, o,
                                               path(storage::kIndicesFile), &result->edge_cut));
    } else {
      FS_RETURN_IF_ERROR(WriteIndices<int32_t>(src, part, offsets, new_id, new_indptr, ordered, o,
                                               path(storage::kIndicesFile), &result->edge_cut));
    }
  }
  FS_RETURN_IF_ERROR(WriteNodeArray(src.features, part, offsets, placed, o, path(storage::kFeaturesFile)));
  FS_RETURN_IF_ERROR(WriteNodeArray(src.labels, part, offsets, placed, o, path(storage::kLabelsFile)));
  FS_RETURN_IF_ERROR(WriteSplit(src.train_ids, new_id, path(storage::kTrainIdsFile)));
  FS_RETURN_IF_ERROR(WriteSplit(src.val_ids, new_id, path(storage::kValIdsFile)));
  FS_RETURN_IF_ERROR(WriteSplit(src.test_ids, new_id, path(storage::kTestIdsFile)));
  if (src.original_ids) {
    FS_RETURN_IF_ERROR(
        WriteNodeArray(*src.original_ids, part, offsets, placed, o, path(storage::kOriginalIdsFile)));
  } else {
    // The identity: new id -> the input's id.
    storage::NpyInfo i64;
    i64.dtype = DType::kI64;
    i64.item_size = 8;
    FS_RETURN_IF_ERROR(ScatterNodeRows(
        [](int64_t first, int64_t count, void* buf) {
          std::iota(static_cast<int64_t*>(buf), static_cast<int64_t*>(buf) + count, first);
          return Status::OK();
        },
        i64, {n}, sizeof(int64_t), part, offsets, placed, o, path(storage::kOriginalIdsFile)));
  }
  return Status::OK();
}

}  // namespace foresight::graph::internal
