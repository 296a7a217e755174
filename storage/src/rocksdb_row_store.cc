// The rocksdb backend: sparse int64 keys, one value per row. Keys are the
// 8-byte big-endian encoding of the key with its sign bit flipped, so the
// database orders them as int64s (neighbouring keys share blocks). Reads are
// one MultiGet per submission, writes one WriteBatch; both complete inside
// Submit*. A metadata key (not 8 bytes long, so never a row) records the
// row layout, checked on every open.
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "row_store_internal.h"

namespace foresight::storage::internal {
namespace {

constexpr char kMetaKey[] = "foresight.row_store.meta";

void EncodeKey(int64_t key, char out[8]) {
  const uint64_t u = static_cast<uint64_t>(key) ^ (uint64_t(1) << 63);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(u >> (56 - 8 * i));
}

Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::OK();
  if (s.IsCorruption()) return DataLoss(what + ": " + s.ToString());
  if (s.IsNotFound()) return NotFound(what + ": " + s.ToString());
  if (s.IsNoSpace()) return ResourceExhausted(what + ": " + s.ToString());
  return IoError(what + ": " + s.ToString());
}

std::string MetaValue(DType dtype, int64_t row_width) {
  return std::string("dtype=") + DTypeName(dtype) + " row_width=" + std::to_string(row_width);
}

Status ParseMeta(const std::string& value, const std::string& path, DType* dtype,
                 int64_t* row_width) {
  std::istringstream in(value);
  std::string d, w;
  in >> d >> w;
  const auto bad = [&] {
    return DataLoss(path + ": corrupt row store metadata '" + value +
                    "' (expected 'dtype=<t> row_width=<n>')");
  };
  if (d.rfind("dtype=", 0) != 0 || w.rfind("row_width=", 0) != 0) return bad();
  auto parsed = ParseDType(d.substr(6));
  if (!parsed.ok()) return bad();
  *dtype = parsed.value();
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(w.c_str() + 10, &end, 10);
  if (errno != 0 || *end != '\0' || n <= 0) return bad();
  *row_width = n;
  return Status::OK();
}

class RocksDbRowStore final : public RowStore {
 public:
  RocksDbRowStore(DType dtype, int64_t row_width, std::string path,
                  std::unique_ptr<rocksdb::DB> db, bool writable)
      : RowStore(dtype, row_width), path_(std::move(path)), db_(std::move(db)),
        writable_(writable) {}
  ~RocksDbRowStore() override {
    if (db_ != nullptr) db_->Close().PermitUncheckedError();
  }

  int64_t num_rows() const override { return -1; }
  bool writable() const override { return writable_; }
  std::string backend() const override { return "rocksdb"; }

  StatusOr<IoTicket> SubmitRead(const std::vector<RowRequest>& reqs, uint8_t* absent) override {
    FS_RETURN_IF_ERROR(CheckBuffers(reqs));
    const size_t n = reqs.size();
    const size_t rb = static_cast<size_t>(row_bytes());
    stats_.AddRead(static_cast<int64_t>(n), 0, 0);
    if (n == 0) return tickets_.Add(Status::OK());
    key_bytes_.resize(n * 8);
    keys_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      EncodeKey(reqs[i].key, &key_bytes_[i * 8]);
      keys_[i] = rocksdb::Slice(&key_bytes_[i * 8], 8);
    }
    std::vector<rocksdb::PinnableSlice> values(n);
    std::vector<rocksdb::Status> statuses(n);
    db_->MultiGet(rocksdb::ReadOptions(), db_->DefaultColumnFamily(), n, keys_.data(),
                  values.data(), statuses.data(), false);
    Status first;
    int64_t found = 0, missing = 0;
    for (size_t i = 0; i < n; ++i) {
      if (absent != nullptr) absent[i] = 0;
      if (statuses[i].IsNotFound()) {
        ++missing;
        if (absent != nullptr) {
          absent[i] = 1;
        } else if (first.ok()) {
          first = NotFound(path_ + ": key " + std::to_string(reqs[i].key) + " at position " +
                           std::to_string(i) + " has no row");
        }
        continue;
      }
      if (!statuses[i].ok()) {
        if (first.ok()) first = FromRocks(statuses[i], path_ + ": MultiGet of key " +
                                                           std::to_string(reqs[i].key));
        continue;
      }
      if (values[i].size() != rb) {
        if (first.ok()) {
          first = DataLoss(path_ + ": key " + std::to_string(reqs[i].key) + " holds " +
                           std::to_string(values[i].size()) + " bytes, expected a row of " +
                           std::to_string(rb));
        }
        continue;
      }
      std::memcpy(reqs[i].data, values[i].data(), rb);
      ++found;
    }
    stats_.AddRead(0, 1, found * static_cast<int64_t>(rb));
    stats_.AddAbsent(missing);
    return tickets_.Add(std::move(first));
  }

  StatusOr<IoTicket> SubmitWrite(const std::vector<RowRequest>& reqs) override {
    if (!writable_) return FailedPrecondition(path_ + ": the rocksdb row store is read-only");
    FS_RETURN_IF_ERROR(CheckBuffers(reqs));
    const size_t rb = static_cast<size_t>(row_bytes());
    stats_.AddWrite(static_cast<int64_t>(reqs.size()), 0, 0);
    if (reqs.empty()) return tickets_.Add(Status::OK());
    rocksdb::WriteBatch batch(reqs.size() * (rb + 8 + 16));
    char key[8];
    for (const RowRequest& r : reqs) {
      EncodeKey(r.key, key);
      rocksdb::Status s = batch.Put(rocksdb::Slice(key, 8),
                                    rocksdb::Slice(static_cast<const char*>(r.data), rb));
      if (!s.ok()) return tickets_.Add(FromRocks(s, path_ + ": WriteBatch"));
    }
    Status s = FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), path_ + ": write");
    if (s.ok()) stats_.AddWrite(0, 1, static_cast<int64_t>(reqs.size() * rb));
    return tickets_.Add(std::move(s));
  }

  Status Wait(IoTicket ticket) override { return tickets_.Take(ticket); }

  Status Flush() override {
    if (!writable_) return Status::OK();
    return FromRocks(db_->SyncWAL(), path_ + ": SyncWAL");
  }

  RowStoreStats stats() const override { return stats_.Snapshot(); }
  void ResetStats() override { stats_.Reset(); }

 private:
  std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
  bool writable_;
  std::vector<char> key_bytes_;
  std::vector<rocksdb::Slice> keys_;
  AtomicStats stats_;
  SyncTickets tickets_;
};

}  // namespace

StatusOr<std::unique_ptr<RowStore>> OpenRocksDbRowStore(const RowStoreOptions& options) {
  const std::string& path = options.path;
  if (path.empty()) return InvalidArgument("rocksdb row store: no database directory given");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return ErrnoError("stat " + path, errno);
    if (!options.create) {
      return NotFound(path + ": no such RocksDB database (rocksdb row store; pass create to make one)");
    }
  } else if (!S_ISDIR(st.st_mode)) {
    return InvalidArgument(path + " is not a directory; a rocksdb row store is a database directory");
  }
  if (options.create && !options.writable) {
    return InvalidArgument(path + ": creating a read-only rocksdb row store makes no sense (set writable)");
  }
  if (options.create && options.row_width <= 0) {
    return InvalidArgument(path + ": creating a rocksdb row store needs row_width > 0");
  }

  rocksdb::Options opts;
  opts.create_if_missing = options.create;
  // Rows of floats do not compress; spend no CPU trying.
  opts.compression = rocksdb::kNoCompression;
  rocksdb::BlockBasedTableOptions table;
  // Absent keys (embedding rows never touched) are answered by the filter.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  opts.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs = options.writable ? rocksdb::DB::Open(opts, path, &raw)
                                        : rocksdb::DB::OpenForReadOnly(opts, path, &raw);
  FS_RETURN_IF_ERROR(FromRocks(rs, "open rocksdb row store " + path));
  std::unique_ptr<rocksdb::DB> db(raw);

  std::string meta;
  rs = db->Get(rocksdb::ReadOptions(), kMetaKey, &meta);
  DType dtype = options.dtype;
  int64_t width = options.row_width;
  if (rs.IsNotFound()) {
    if (!options.create) {
      return DataLoss(path + ": not a foresight row store (the RocksDB database has no '" +
                      std::string(kMetaKey) + "' key)");
    }
    rocksdb::WriteOptions wo;
    wo.sync = true;
    FS_RETURN_IF_ERROR(FromRocks(db->Put(wo, kMetaKey, MetaValue(dtype, width)),
                                 path + ": writing row store metadata"));
  } else {
    FS_RETURN_IF_ERROR(FromRocks(rs, path + ": reading row store metadata"));
    DType file_dtype;
    int64_t file_width;
    FS_RETURN_IF_ERROR(ParseMeta(meta, path, &file_dtype, &file_width));
    if (options.row_width > 0 && (file_width != options.row_width || file_dtype != options.dtype)) {
      return InvalidArgument(path + ": holds rows of " + std::to_string(file_width) + " x " +
                             DTypeName(file_dtype) + ", expected " +
                             std::to_string(options.row_width) + " x " + DTypeName(options.dtype));
    }
    dtype = file_dtype;
    width = file_width;
  }
  return std::unique_ptr<RowStore>(
      new RocksDbRowStore(dtype, width, path, std::move(db), options.writable));
}

}  // namespace foresight::storage::internal
