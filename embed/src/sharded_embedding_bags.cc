#include "foresight/embed/sharded_embedding_bags.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "foresight/core/stopwatch.h"

namespace foresight::embed {

namespace {

int64_t IdAt(const Tensor& ids, int64_t k) {
  return ids.dtype() == DType::kI32 ? ids.data<int32_t>()[k] : ids.data<int64_t>()[k];
}

// The per-rank lists as one i64 tensor with their lengths as counts.
Tensor Concat(const std::vector<std::vector<int64_t>>& parts, std::vector<int64_t>* counts) {
  int64_t total = 0;
  for (const auto& p : parts) total += static_cast<int64_t>(p.size());
  Tensor t = Tensor::Empty({total}, DType::kI64);
  int64_t at = 0;
  counts->clear();
  for (const auto& p : parts) {
    if (!p.empty()) std::memcpy(t.data<int64_t>() + at, p.data(), p.size() * sizeof(int64_t));
    at += static_cast<int64_t>(p.size());
    counts->push_back(static_cast<int64_t>(p.size()));
  }
  return t;
}

}  // namespace

StatusOr<std::unique_ptr<ShardedEmbeddingBags>> ShardedEmbeddingBags::Open(const EmbeddingBagCollectionOptions& options,
                                                                           ShardingKind kind, Communicator* comm) {
  if (comm == nullptr) return InvalidArgument("sharded embedding bags: no communicator");
  for (int64_t rows : options.table_rows) {
    if (rows <= 0) return InvalidArgument("sharded embedding bags: dynamic tables (rows 0) are not sharded");
  }
  if (options.pooling != kernels::Pooling::kSum) {
    // Mean pooling divides by the whole bag's length, which a row-wise
    // owner does not see.
    return InvalidArgument("sharded embedding bags: sum pooling only");
  }
  FS_ASSIGN_OR_RETURN(EmbeddingSharding sharding, EmbeddingSharding::Make(kind, options.table_rows, comm->size()));
  std::unique_ptr<ShardedEmbeddingBags> s(new ShardedEmbeddingBags(options, std::move(sharding), comm));
  const int rank = comm->rank();
  const std::vector<int64_t> tables = s->sharding_.TablesOf(rank);
  std::vector<int64_t> starts(options.table_rows.size() + 1, 0);
  for (size_t t = 0; t < options.table_rows.size(); ++t) starts[t + 1] = starts[t] + options.table_rows[t];

  EmbeddingBagCollectionOptions local = options;
  local.table_rows = s->sharding_.ShardRows(rank);
  local.init_rows.clear();
  for (int64_t t : tables) local.init_rows.push_back(options.table_rows[t]);
  const EmbeddingSharding* plan = &s->sharding_;
  // The unsharded collection's key of each row (EmbeddingBagCollection::Key).
  local.init_key = [plan, tables, starts, rank](int64_t table, int64_t id) {
    const int64_t t = tables[static_cast<size_t>(table)];
    return starts[static_cast<size_t>(t)] + plan->GlobalId(rank, id);
  };
  FS_ASSIGN_OR_RETURN(s->shard_, EmbeddingBagCollection::Open(local));
  return s;
}

Status ShardedEmbeddingBags::Exchange(const Tensor& send, const std::vector<int64_t>& counts, Tensor* out,
                                      std::vector<int64_t>* recv_counts) {
  Stopwatch watch;
  FS_RETURN_IF_ERROR(comm_->AllToAllV(send, counts, out, recv_counts));
  exchange_seconds_ += watch.Lap();
  exchange_bytes_ += static_cast<int64_t>(send.nbytes());
  return Status::OK();
}

Status ShardedEmbeddingBags::Enqueue(const Tensor& ids, const Tensor& offsets, int64_t global_batch) {
  if (global_batch < 1) {
    return InvalidArgument("ShardedEmbeddingBags::Enqueue: a global batch of " + std::to_string(global_batch));
  }
  std::vector<int64_t> parts;
  for (int r = 0; r < comm_->size(); ++r) parts.push_back(RankPartSize(global_batch, r, comm_->size()));
  return Enqueue(ids, offsets, std::move(parts));
}

Status ShardedEmbeddingBags::Enqueue(const Tensor& ids, const Tensor& offsets, std::vector<int64_t> parts) {
  const char* op = "ShardedEmbeddingBags::Enqueue";
  const int ranks = comm_->size();
  const int64_t tables = num_tables();
  if (static_cast<int>(parts.size()) != ranks) {
    return InvalidArgument(std::string(op) + ": " + std::to_string(parts.size()) + " parts for " +
                           std::to_string(ranks) + " ranks");
  }
  Batch batch;
  int64_t global_batch = 0;
  for (int64_t p : parts) {
    if (p < 0) return InvalidArgument(std::string(op) + ": a part of " + std::to_string(p) + " samples");
    batch.begins.push_back(global_batch);
    global_batch += p;
  }
  const int64_t b = parts[static_cast<size_t>(comm_->rank())];
  const auto part_of = [&parts](int r) { return parts[static_cast<size_t>(r)]; };
  if (!ids.defined() || (ids.dtype() != DType::kI32 && ids.dtype() != DType::kI64) || ids.dim() != 1 ||
      !ids.is_contiguous() || !ids.device().is_cpu()) {
    return InvalidArgument(std::string(op) + ": ids must be a contiguous 1-D i32 or i64 host tensor, got " +
                           ids.ToString());
  }
  if (!offsets.defined() || offsets.dtype() != DType::kI64 || offsets.dim() != 1 || !offsets.is_contiguous() ||
      offsets.size(0) != tables * b + 1) {
    return InvalidArgument(std::string(op) + ": offsets must be a contiguous i64 host tensor of T*b + 1 = " +
                           std::to_string(tables * b + 1) + " values (this rank's " + std::to_string(b) +
                           " samples of " + std::to_string(global_batch) + "), got " + offsets.ToString());
  }
  const int64_t* off = offsets.data<int64_t>();
  if (off[0] != 0 || off[tables * b] != ids.size(0)) {
    return InvalidArgument(std::string(op) + ": offsets must run from 0 to the " + std::to_string(ids.size(0)) +
                           " ids");
  }
  // This rank's ids by owner, each owner's in its shard's order: its
  // tables, then samples, then position in the bag; with the length of
  // each (table, sample) bag's part.
  std::vector<std::vector<int64_t>> lengths(static_cast<size_t>(ranks)), local_ids(static_cast<size_t>(ranks));
  const bool row_wise = sharding_.kind() == ShardingKind::kRow;
  for (int64_t t = 0; t < tables; ++t) {
    const int64_t rows = sharding_.table_rows()[t];
    for (int64_t s = 0; s < b; ++s) {
      const int64_t q = t * b + s;
      if (off[q + 1] < off[q]) {
        return InvalidArgument(std::string(op) + ": offsets decrease at " + std::to_string(q + 1));
      }
      if (row_wise) {
        for (auto& l : lengths) l.push_back(0);
      } else {
        lengths[sharding_.Owner(t, 0)].push_back(off[q + 1] - off[q]);
      }
      for (int64_t k = off[q]; k < off[q + 1]; ++k) {
        const int64_t id = IdAt(ids, k);
        if (id < 0 || id >= rows) {
          return OutOfRange(std::string(op) + ": ids[" + std::to_string(k) + "] = " + std::to_string(id) +
                            " (sample " + std::to_string(s) + " of table " + std::to_string(t) +
                            ") is out of the table's range [0, " + std::to_string(rows) + ")");
        }
        const int o = sharding_.Owner(t, id);
        local_ids[o].push_back(sharding_.LocalId(id));
        if (row_wise) ++lengths[o].back();
      }
    }
  }
  batch.global_batch = global_batch;
  batch.parts = parts;
  for (const auto& l : lengths) {
    batch.sent.emplace_back(l.size());
    for (size_t i = 0; i < l.size(); ++i) batch.sent.back()[i] = l[i] > 0 ? 1 : 0;
  }
  std::vector<int64_t> counts, recv_counts, id_counts, recv_id_counts;
  Tensor got_lengths, got_ids;
  FS_RETURN_IF_ERROR(Exchange(Concat(lengths, &counts), counts, &got_lengths, &recv_counts));
  FS_RETURN_IF_ERROR(Exchange(Concat(local_ids, &id_counts), id_counts, &got_ids, &recv_id_counts));

  // This shard's batch: its tables' bags of every sample of the global
  // batch, table-major, the senders' parts in rank order (= sample order).
  const int64_t shard_tables = ShardTables(comm_->rank());
  std::vector<int64_t> length_at(static_cast<size_t>(ranks)), id_at(static_cast<size_t>(ranks));
  int64_t la = 0, ia = 0;
  for (int r = 0; r < ranks; ++r) {
    if (recv_counts[r] != shard_tables * part_of(r)) {
      return Internal(std::string(op) + ": rank " + std::to_string(r) + " sent " + std::to_string(recv_counts[r]) +
                      " bag lengths, expected " + std::to_string(shard_tables * part_of(r)) +
                      " (do all ranks enqueue the same global batch?)");
    }
    length_at[r] = la;
    id_at[r] = ia;
    la += recv_counts[r];
    ia += recv_id_counts[r];
  }
  Tensor shard_ids = Tensor::Empty({ia}, DType::kI64);
  Tensor shard_offsets = Tensor::Empty({shard_tables * global_batch + 1}, DType::kI64);
  const int64_t* len = got_lengths.data<int64_t>();
  const int64_t* src = got_ids.data<int64_t>();
  int64_t* dst = shard_ids.data<int64_t>();
  int64_t* so = shard_offsets.data<int64_t>();
  int64_t n = 0, q = 0;
  so[0] = 0;
  batch.held.resize(static_cast<size_t>(shard_tables * global_batch));
  for (int64_t t = 0; t < shard_tables; ++t) {
    for (int r = 0; r < ranks; ++r) {
      const int64_t part = part_of(r);
      for (int64_t s = 0; s < part; ++s) {
        const int64_t l = len[length_at[r] + t * part + s];
        if (l < 0 || id_at[r] + l > ia) {
          return Internal(std::string(op) + ": rank " + std::to_string(r) + " sent a bad bag");
        }
        std::memcpy(dst + n, src + id_at[r], static_cast<size_t>(l) * sizeof(int64_t));
        id_at[r] += l;
        n += l;
        batch.held[q] = l > 0 ? 1 : 0;
        so[++q] = n;
      }
    }
  }
  if (n != ia) return Internal(std::string(op) + ": bag lengths do not cover the ids received");
  FS_RETURN_IF_ERROR(shard_->Enqueue(shard_ids, shard_offsets));
  pending_.push_back(std::move(batch));
  return Status::OK();
}

Status ShardedEmbeddingBags::Forward(const ExecContext& ctx, Tensor* out) {
  if (pending_.empty()) return FailedPrecondition("ShardedEmbeddingBags::Forward: no batch enqueued");
  const int ranks = comm_->size(), rank = comm_->rank();
  current_ = std::move(pending_.front());
  pending_.pop_front();
  const int64_t global_batch = current_.global_batch;
  const int64_t shard_tables = ShardTables(rank), d = dim();
  Tensor pooled = Tensor::Empty({global_batch, shard_tables * d}, DType::kF32);
  FS_RETURN_IF_ERROR(shard_->Forward(ctx, Tensor(), &pooled));
  // To each rank, the pooled rows of its samples' bags that have ids here,
  // sample by sample, in this shard's table order.
  int64_t rows = 0;
  for (uint8_t h : current_.held) rows += h;
  Tensor send = Tensor::Empty({rows, d}, DType::kF32);
  std::vector<int64_t> counts(static_cast<size_t>(ranks), 0), recv_counts;
  float* dst = send.data<float>();
  const float* p = pooled.data<float>();
  for (int r = 0; r < ranks; ++r) {
    const int64_t begin = current_.begins[static_cast<size_t>(r)], part = current_.parts[static_cast<size_t>(r)];
    for (int64_t s = begin; s < begin + part; ++s) {
      for (int64_t k = 0; k < shard_tables; ++k) {
        if (!current_.held[k * global_batch + s]) continue;
        std::memcpy(dst, p + (s * shard_tables + k) * d, static_cast<size_t>(d) * sizeof(float));
        dst += d;
        ++counts[r];
      }
    }
  }
  Tensor got;
  FS_RETURN_IF_ERROR(Exchange(send, counts, &got, &recv_counts));

  const int64_t b = current_.parts[static_cast<size_t>(rank)], tables = num_tables();
  *out = Tensor::Zeros({b, tables * d}, DType::kF32);
  float* o = out->data<float>();
  const float* g = got.data<float>();
  for (int r = 0; r < ranks; ++r) {
    // Rank r's rows, in the order it sent them. Row-wise partial sums are
    // added in rank order (a fixed order).
    const std::vector<int64_t>& owned = sharding_.TablesOf(r);
    const std::vector<uint8_t>& sent = current_.sent[r];
    const int64_t w = static_cast<int64_t>(owned.size());
    int64_t used = 0;
    for (int64_t s = 0; s < b; ++s) {
      for (int64_t k = 0; k < w; ++k) {
        if (!sent[k * b + s]) continue;
        float* to = o + s * tables * d + owned[k] * d;
        for (int64_t j = 0; j < d; ++j) to[j] += g[j];
        g += d;
        ++used;
      }
    }
    if (used != recv_counts[r]) {
      return Internal("ShardedEmbeddingBags::Forward: rank " + std::to_string(r) + " sent " +
                      std::to_string(recv_counts[r]) + " pooled rows, expected " + std::to_string(used));
    }
  }
  return Status::OK();
}

Status ShardedEmbeddingBags::BackwardUpdate(const ExecContext& ctx, const kernels::SparseOptimizerConfig& config,
                                            const Tensor& grad_out) {
  if (current_.global_batch < 0) {
    return FailedPrecondition("ShardedEmbeddingBags::BackwardUpdate: no Forward to update from");
  }
  const int ranks = comm_->size(), rank = comm_->rank();
  const Batch batch = std::move(current_);
  current_ = Batch();
  const int64_t global_batch = batch.global_batch;
  const int64_t b = batch.parts[static_cast<size_t>(rank)], tables = num_tables(), d = dim();
  if (!grad_out.defined() || grad_out.dtype() != DType::kF32 || !grad_out.is_contiguous() || grad_out.dim() != 2 ||
      grad_out.size(0) != b || grad_out.size(1) != tables * d) {
    return InvalidArgument("ShardedEmbeddingBags::BackwardUpdate: grad_out must be contiguous f32 [" +
                           std::to_string(b) + ", " + std::to_string(tables * d) + "], got " + grad_out.ToString());
  }
  // Each owner gets the gradient rows of the bags it pooled for this rank,
  // in the order it sent them.
  int64_t rows = 0;
  for (const auto& sent : batch.sent) {
    for (uint8_t x : sent) rows += x;
  }
  Tensor send = Tensor::Empty({rows, d}, DType::kF32);
  std::vector<int64_t> counts(static_cast<size_t>(ranks), 0), recv_counts;
  float* dst = send.data<float>();
  const float* g = grad_out.data<float>();
  for (int r = 0; r < ranks; ++r) {
    const std::vector<int64_t>& owned = sharding_.TablesOf(r);
    const std::vector<uint8_t>& sent = batch.sent[r];
    for (int64_t s = 0; s < b; ++s) {
      for (size_t k = 0; k < owned.size(); ++k) {
        if (!sent[k * b + s]) continue;
        std::memcpy(dst, g + s * tables * d + owned[k] * d, static_cast<size_t>(d) * sizeof(float));
        dst += d;
        ++counts[r];
      }
    }
  }
  Tensor got;
  FS_RETURN_IF_ERROR(Exchange(send, counts, &got, &recv_counts));
  // The global batch's gradient of this shard's bags (zero where a bag has
  // no id here: the update skips empty bags).
  const int64_t shard_tables = ShardTables(rank);
  Tensor grad = Tensor::Zeros({global_batch, shard_tables * d}, DType::kF32);
  float* to = grad.data<float>();
  const float* from = got.data<float>();
  for (int64_t s = 0; s < global_batch; ++s) {
    for (int64_t k = 0; k < shard_tables; ++k) {
      if (!batch.held[k * global_batch + s]) continue;
      std::memcpy(to + (s * shard_tables + k) * d, from, static_cast<size_t>(d) * sizeof(float));
      from += d;
    }
  }
  if (from != got.data<float>() + got.numel()) {
    return Internal("ShardedEmbeddingBags::BackwardUpdate: the gradient rows received do not match the bags");
  }
  return shard_->BackwardUpdate(ctx, config, grad);
}

Status ShardedEmbeddingBags::ReadRows(int64_t table, const std::vector<int64_t>& ids, float* out) {
  const char* op = "ShardedEmbeddingBags::ReadRows";
  const int ranks = comm_->size(), rank = comm_->rank();
  if (table < 0 || table >= num_tables()) {
    return OutOfRange(std::string(op) + ": table " + std::to_string(table) + " of " + std::to_string(num_tables()));
  }
  const int64_t rows = sharding_.table_rows()[static_cast<size_t>(table)], d = dim();
  // Each owner's local ids, in the order asked; where each answer goes.
  std::vector<std::vector<int64_t>> asked(static_cast<size_t>(ranks));
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (id < 0 || id >= rows) {
      return OutOfRange(std::string(op) + ": ids[" + std::to_string(i) + "] = " + std::to_string(id) +
                        " is out of table " + std::to_string(table) + "'s range [0, " + std::to_string(rows) + ")");
    }
    asked[static_cast<size_t>(sharding_.Owner(table, id))].push_back(sharding_.LocalId(id));
  }
  std::vector<int64_t> counts, recv_counts;
  Tensor got;
  FS_RETURN_IF_ERROR(Exchange(Concat(asked, &counts), counts, &got, &recv_counts));
  // This shard's answers: the rows (all of their floats) read from its
  // table, the embedding's dim floats sent back.
  std::vector<int64_t> keys(static_cast<size_t>(got.numel()));
  const std::vector<int64_t>& mine = sharding_.TablesOf(rank);
  const auto local_table = std::find(mine.begin(), mine.end(), table);
  if (!keys.empty() && local_table == mine.end()) {
    return Internal(std::string(op) + ": asked for rows of table " + std::to_string(table) + " which rank " +
                    std::to_string(rank) + " does not hold");
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = shard_->Key(local_table - mine.begin(), got.data<int64_t>()[i]);
  }
  const int64_t width = shard_->layout().row_width();
  std::vector<float> full(keys.size() * static_cast<size_t>(width));
  if (!keys.empty()) FS_RETURN_IF_ERROR(shard_->table()->ReadRows(keys, full.data()));
  Tensor send = Tensor::Empty({static_cast<int64_t>(keys.size()), d}, DType::kF32);
  for (size_t i = 0; i < keys.size(); ++i) {
    std::memcpy(send.data<float>() + static_cast<int64_t>(i) * d, full.data() + static_cast<int64_t>(i) * width,
                static_cast<size_t>(d) * sizeof(float));
  }
  Tensor rows_back;
  std::vector<int64_t> back_counts;
  FS_RETURN_IF_ERROR(Exchange(send, recv_counts, &rows_back, &back_counts));
  // The answers in the order asked: each owner's in its request's order.
  std::vector<int64_t> at(static_cast<size_t>(ranks), 0);
  for (int r = 1; r < ranks; ++r) at[static_cast<size_t>(r)] = at[static_cast<size_t>(r - 1)] + back_counts[r - 1];
  for (size_t i = 0; i < ids.size(); ++i) {
    const int o = sharding_.Owner(table, ids[i]);
    std::memcpy(out + static_cast<int64_t>(i) * d, rows_back.data<float>() + at[static_cast<size_t>(o)]++ * d,
                static_cast<size_t>(d) * sizeof(float));
  }
  return Status::OK();
}

}  // namespace foresight::embed
