#include "foresight/embed/embedding_bag_collection.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace foresight::embed {

StatusOr<std::unique_ptr<EmbeddingBagCollection>> EmbeddingBagCollection::Open(
    const EmbeddingBagCollectionOptions& options) {
  if (options.table_rows.empty()) return InvalidArgument("embedding bag collection: no tables");
  std::unique_ptr<EmbeddingBagCollection> c(new EmbeddingBagCollection(options));
  const int64_t tables = c->num_tables();
  const bool any_dynamic = std::count(options.table_rows.begin(), options.table_rows.end(), 0) > 0;
  c->dynamic_ = any_dynamic;
  if (any_dynamic && std::count(options.table_rows.begin(), options.table_rows.end(), 0) != tables) {
    return InvalidArgument("embedding bag collection: tables are either all dynamic (rows 0) or all dense");
  }
  if (any_dynamic && tables > (int64_t{1} << (63 - kDynamicIdBits))) {
    return InvalidArgument("embedding bag collection: too many dynamic tables");
  }
  c->offsets_.assign(static_cast<size_t>(tables) + 1, 0);
  for (int64_t t = 0; t < tables; ++t) {
    if (options.table_rows[t] < 0) {
      return InvalidArgument("embedding bag collection: table " + std::to_string(t) + " has " +
                             std::to_string(options.table_rows[t]) + " rows");
    }
    c->offsets_[t + 1] = c->offsets_[t] + options.table_rows[t];
  }
  c->table_offsets_ = Tensor::Empty({tables + 1}, DType::kI64);
  std::copy(c->offsets_.begin(), c->offsets_.end(), c->table_offsets_.data<int64_t>());

  EmbeddingTableOptions to;
  to.rows = any_dynamic ? 0 : c->offsets_[tables];
  to.dim = options.dim;
  to.dtype = options.dtype;
  to.optimizer = options.optimizer;
  to.init = options.init;
  to.store = options.store;
  to.cache = options.cache;
  to.read_ahead = options.read_ahead;
  // Each table keeps its own default scale, 1/sqrt(its rows).
  const std::vector<int64_t> starts = c->offsets_;
  const EmbeddingInit init = options.init;
  const bool dynamic = any_dynamic;
  if (!options.init_rows.empty() && static_cast<int64_t>(options.init_rows.size()) != tables) {
    return InvalidArgument("embedding bag collection: init_rows has " + std::to_string(options.init_rows.size()) +
                           " entries for " + std::to_string(tables) + " tables");
  }
  if (options.init_key && dynamic) {
    return InvalidArgument("embedding bag collection: init_key needs dense tables");
  }
  const std::vector<int64_t>& scale_rows = options.init_rows.empty() ? options.table_rows : options.init_rows;
  std::vector<float> scales(static_cast<size_t>(tables));
  for (int64_t t = 0; t < tables; ++t) scales[t] = InitScale(init, scale_rows[t]);
  auto table_of = [starts](int64_t key) {
    return static_cast<int64_t>(std::upper_bound(starts.begin(), starts.end(), key) - starts.begin() - 1);
  };
  to.init_scale_of_key = [table_of, scales, dynamic](int64_t key) {
    if (dynamic) return scales[static_cast<size_t>(key >> kDynamicIdBits)];
    return scales[static_cast<size_t>(table_of(key))];
  };
  if (options.init_key) {
    to.init_key_of_key = [table_of, starts, init_key = options.init_key](int64_t key) {
      const int64_t t = table_of(key);
      return init_key(t, key - starts[static_cast<size_t>(t)]);
    };
  }
  FS_ASSIGN_OR_RETURN(c->table_, EmbeddingTable::Open(to));
  c->sparse_rows_ = autograd::Var(Tensor::Zeros({1}, DType::kF32), /*requires_grad=*/true);
  return c;
}

int64_t EmbeddingBagCollection::Key(int64_t table, int64_t id) const {
  return dynamic_ ? (table << kDynamicIdBits) | id : offsets_[table] + id;
}

Status EmbeddingBagCollection::Enqueue(const Tensor& ids, const Tensor& offsets) {
  const char* op = "EmbeddingBagCollection::Enqueue";
  FS_RETURN_IF_ERROR(CheckDefined(ids, op));
  if ((ids.dtype() != DType::kI32 && ids.dtype() != DType::kI64) || ids.dim() != 1 || !ids.is_contiguous() ||
      !ids.device().is_cpu()) {
    return InvalidArgument(std::string(op) + ": ids must be a contiguous 1-D i32 or i64 host tensor, got " +
                           ids.ToString());
  }
  FS_RETURN_IF_ERROR(CheckDType(offsets, DType::kI64, op));
  if (offsets.dim() != 1 || !offsets.is_contiguous() || !offsets.device().is_cpu() ||
      (offsets.size(0) - 1) % num_tables() != 0) {
    return InvalidArgument(std::string(op) + ": offsets must be a contiguous 1-D i64 host tensor of T*B + 1 values (T = " +
                           std::to_string(num_tables()) + "), got " + offsets.ToString());
  }
  const int64_t batch = (offsets.size(0) - 1) / num_tables();
  const int64_t* off = offsets.data<int64_t>();
  if (off[0] != 0 || off[offsets.size(0) - 1] != ids.size(0)) {
    return InvalidArgument(std::string(op) + ": offsets must run from 0 to the " + std::to_string(ids.size(0)) + " ids");
  }
  // Direct mode reads the ids in place: only their range is checked here.
  const bool direct = table_->direct();
  std::vector<int64_t> keys(direct ? 0 : static_cast<size_t>(ids.size(0)));
  for (int64_t q = 0; q < num_tables() * batch; ++q) {
    if (off[q + 1] < off[q]) {
      return InvalidArgument(std::string(op) + ": offsets decrease at " + std::to_string(q + 1));
    }
    const int64_t t = q / std::max<int64_t>(batch, 1);
    const int64_t limit = dynamic_ ? (int64_t{1} << kDynamicIdBits) : options_.table_rows[t];
    for (int64_t k = off[q]; k < off[q + 1]; ++k) {
      const int64_t id = ids.dtype() == DType::kI32 ? ids.data<int32_t>()[k] : ids.data<int64_t>()[k];
      if (id < 0 || id >= limit) {
        return OutOfRange(std::string(op) + ": ids[" + std::to_string(k) + "] = " + std::to_string(id) +
                          " (sample " + std::to_string(q % batch) + " of table " + std::to_string(t) +
                          ") is out of the table's range [0, " + std::to_string(limit) + ")");
      }
      if (!direct) keys[k] = Key(t, id);
    }
  }
  if (!direct) FS_RETURN_IF_ERROR(table_->Enqueue(std::move(keys)));
  pending_.push_back({ids, offsets});
  return Status::OK();
}

void EmbeddingBagCollection::Close() { table_->Close(); }

Status EmbeddingBagCollection::ReleaseCurrent(bool wrote) {
  if (!out_) return Status::OK();
  out_ = false;
  current_ = Pending();
  current_psw_ = Tensor();
  if (table_->direct()) return Status::OK();  // updates went straight into the store's rows
  return table_->Release(&rows_, wrote);
}

Status EmbeddingBagCollection::Forward(const ExecContext& ctx, const Tensor& per_sample_weights, Tensor* out) {
  FS_RETURN_IF_ERROR(ReleaseCurrent(false));
  if (pending_.empty()) return FailedPrecondition("EmbeddingBagCollection::Forward: no batch enqueued");
  if (table_->direct()) {
    rows_ = RowBatch();
    rows_.rows = table_->direct_rows();
  } else {
    FS_ASSIGN_OR_RETURN(rows_, table_->Acquire());
  }
  current_ = std::move(pending_.front());
  pending_.pop_front();
  current_psw_ = per_sample_weights;
  out_ = true;
  if (table_->direct()) {
    return kernels::EmbeddingBagForward(ctx, layout(), rows_.rows, table_offsets_, current_.ids, current_.offsets,
                                        per_sample_weights, options_.pooling, out);
  }
  return kernels::EmbeddingBagForward(ctx, layout(), rows_.rows, Tensor(), rows_.local_ids, current_.offsets,
                                      per_sample_weights, options_.pooling, out);
}

Status EmbeddingBagCollection::BackwardUpdate(const ExecContext& ctx, const kernels::SparseOptimizerConfig& config,
                                              const Tensor& grad_out) {
  if (!out_) return FailedPrecondition("EmbeddingBagCollection::BackwardUpdate: no Forward to update from");
  Tensor rows = rows_.rows;
  Status s = table_->direct()
                 ? kernels::EmbeddingBagBackwardUpdate(ctx, layout(), config, table_offsets_, current_.ids,
                                                       current_.offsets, current_psw_, options_.pooling, grad_out,
                                                       &rows)
                 : kernels::EmbeddingBagBackwardUpdate(ctx, layout(), config, Tensor(), rows_.local_ids,
                                                       current_.offsets, current_psw_, options_.pooling, grad_out,
                                                       &rows);
  // Even a failed update may have written rows: release them as written.
  const Status r = ReleaseCurrent(true);
  FS_RETURN_IF_ERROR(s);
  return r;
}

StatusOr<autograd::Var> EmbeddingBagCollection::Forward(autograd::Tape* tape, const Tensor& per_sample_weights,
                                                        const kernels::SparseOptimizerConfig& config) {
  if (tape == nullptr) return InvalidArgument("EmbeddingBagCollection::Forward: tape is null");
  if (pending_.empty()) return FailedPrecondition("EmbeddingBagCollection::Forward: no batch enqueued");
  const int64_t batch = (pending_.front().offsets.size(0) - 1) / num_tables();
  Tensor out = Tensor::Empty({batch, num_tables() * dim()}, DType::kF32);
  FS_RETURN_IF_ERROR(Forward(tape->ctx(), per_sample_weights, &out));
  if (!tape->recording()) return autograd::Var(out);
  return tape->RecordGrad({sparse_rows_}, out, [this, config](const ExecContext& ctx, const Tensor& grad_out) {
    return BackwardUpdate(ctx, config, grad_out);
  });
}

Status EmbeddingBagCollection::Flush() {
  FS_RETURN_IF_ERROR(ReleaseCurrent(false));
  return table_->Flush();
}

Status EmbeddingBagCollection::ReadEmbedding(int64_t table, int64_t id, float* out) {
  if (table < 0 || table >= num_tables()) return OutOfRange("ReadEmbedding: no table " + std::to_string(table));
  FS_RETURN_IF_ERROR(ReleaseCurrent(false));
  std::vector<uint8_t> row(static_cast<size_t>(layout().row_bytes()));
  FS_RETURN_IF_ERROR(table_->ReadRows({Key(table, id)}, row.data()));
  for (int64_t j = 0; j < dim(); ++j) {
    out[j] = layout().dtype == DType::kF16 ? HalfToFloat(reinterpret_cast<const Half*>(row.data())[j].bits)
                                           : reinterpret_cast<const float*>(row.data())[j];
  }
  return Status::OK();
}

}  // namespace foresight::embed
