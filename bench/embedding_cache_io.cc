// Store I/O of embedding tables trained behind the cache, by policy (issue
// 12, "Out of core"): an EmbeddingBagCollection on the disk store (O_DIRECT,
// io_uring) or another store, a cache of --cache-fraction of the table
// bytes, the fused SGD backward writing every batch's rows (dirty rows
// written back on eviction and at the final flush). The same batches
// (Zipf(s) ranks scattered over each table, as embedding_bench draws them)
// are replayed for --passes passes, each policy on a fresh table. Prints a
// JSON line per policy: store bytes and rows read / written per pass and in
// all (final flush included), cache hits and misses; then one line with
// each policy's bytes read over LRU's, per pass and in all.
//
// The static policy is given the flat keys by their access count over the
// whole trace (the best fixed set a planner could be told ahead).
//
// Usage: embedding_cache_io [--tables 26] [--rows 100000] [--dim 64]
//   [--batch 2048] [--bag 1] [--zipf 1.05] [--batches 40] [--passes 2]
//   [--cache-fraction 0.1] [--lookahead 32] [--threads 2]
//   [--policies lookahead,lru,static] [--store disk] [--dir /tmp]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/stopwatch.h"
#include "foresight/embed/embedding_bag_collection.h"
#include "zipf_ids.h"

namespace fs = foresight;
using fs::bench::Zipf;

namespace {

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> v;
  size_t at = 0;
  while (true) {
    const size_t c = s.find(',', at);
    v.push_back(s.substr(at, c == std::string::npos ? std::string::npos : c - at));
    if (c == std::string::npos) break;
    at = c + 1;
  }
  return v;
}

int Fail(const fs::Status& s) {
  std::fprintf(stderr, "embedding_cache_io: %s\n", s.ToString().c_str());
  return 1;
}

struct PassIo {
  int64_t bytes_read = 0, bytes_written = 0, rows_read = 0, rows_written = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int64_t tables = 26, rows = 100000, dim = 64, batch = 2048, bag = 1;
  double zipf = 1.05, cache_fraction = 0.1;
  int batches = 40, passes = 2, lookahead = 32, threads = 2;
  std::string policies = "lookahead,lru,static", store = "disk", dir = "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--tables") tables = std::atoll(argv[i + 1]);
    else if (k == "--rows") rows = std::atoll(argv[i + 1]);
    else if (k == "--dim") dim = std::atoll(argv[i + 1]);
    else if (k == "--batch") batch = std::atoll(argv[i + 1]);
    else if (k == "--bag") bag = std::atoll(argv[i + 1]);
    else if (k == "--zipf") zipf = std::atof(argv[i + 1]);
    else if (k == "--batches") batches = std::atoi(argv[i + 1]);
    else if (k == "--passes") passes = std::atoi(argv[i + 1]);
    else if (k == "--cache-fraction") cache_fraction = std::atof(argv[i + 1]);
    else if (k == "--lookahead") lookahead = std::atoi(argv[i + 1]);
    else if (k == "--threads") threads = std::atoi(argv[i + 1]);
    else if (k == "--policies") policies = argv[i + 1];
    else if (k == "--store") store = argv[i + 1];
    else if (k == "--dir") dir = argv[i + 1];
    else {
      std::fprintf(stderr, "embedding_cache_io: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  fs::StatusOr<fs::storage::RowStoreKind> kind = fs::storage::ParseRowStoreKind(store);
  if (!kind.ok()) return Fail(kind.status());

  // One pass of batches: ids table-major, `bag` ids a bag.
  const Zipf z(rows, zipf);
  std::mt19937_64 rng(42);
  const int64_t n = tables * batch * bag;
  std::vector<fs::Tensor> ids(static_cast<size_t>(batches));
  std::unordered_map<int64_t, int64_t> count;  // flat key -> uses over the trace
  for (int b = 0; b < batches; ++b) {
    ids[b] = fs::Tensor::Empty({n}, fs::DType::kI64);
    int64_t* p = ids[b].data<int64_t>();
    fs::bench::DrawTableMajorIds(z, rng, tables, rows, batch * bag, p);
    for (int64_t k = 0; k < n; ++k) ++count[k / (batch * bag) * rows + p[k]];
  }
  fs::Tensor offsets = fs::Tensor::Empty({tables * batch + 1}, fs::DType::kI64);
  for (int64_t q = 0; q <= tables * batch; ++q) offsets.data<int64_t>()[q] = q * bag;
  fs::Tensor out = fs::Tensor::Empty({batch, tables * dim}, fs::DType::kF32);
  fs::Tensor grad = fs::Tensor::Empty({batch, tables * dim}, fs::DType::kF32);
  for (int64_t i = 0; i < grad.numel(); ++i) grad.data<float>()[i] = 1e-3f * static_cast<float>(i % 7 - 3);
  std::vector<std::pair<int64_t, int64_t>> by_count(count.begin(), count.end());
  std::sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<int64_t> static_keys;
  static_keys.reserve(by_count.size());
  for (const auto& kc : by_count) static_keys.push_back(kc.first);

  fs::ThreadPool pool(threads);
  const fs::ExecContext ctx = fs::CpuContext(0, &pool);
  fs::kernels::SparseOptimizerConfig sgd;
  sgd.lr = 0.01f;
  std::vector<std::pair<std::string, std::vector<PassIo>>> results;
  std::vector<std::pair<std::string, PassIo>> totals;
  for (const std::string& name : Split(policies)) {
    fs::StatusOr<fs::cache::Policy> policy = fs::cache::ParsePolicy(name);
    if (!policy.ok()) return Fail(policy.status());
    fs::embed::EmbeddingBagCollectionOptions o;
    o.table_rows.assign(static_cast<size_t>(tables), rows);
    o.dim = dim;
    o.store.kind = *kind;
    o.store.path = dir + "/embedding_cache_io_" + std::to_string(getpid()) + "_" + name +
                   (*kind == fs::storage::RowStoreKind::kRocksDb ? "" : ".npy");
    o.store.writable = true;
    o.store.create = true;
    o.cache.policy = *policy;
    o.cache.lookahead = lookahead;
    const fs::kernels::EmbeddingRowLayout layout{dim, fs::DType::kF32, fs::kernels::SparseOptimizer::kSgd};
    o.cache.capacity_bytes =
        static_cast<int64_t>(cache_fraction * static_cast<double>(tables * rows * layout.row_bytes()));
    fs::Stopwatch open_sw;
    fs::StatusOr<std::unique_ptr<fs::embed::EmbeddingBagCollection>> opened = fs::embed::EmbeddingBagCollection::Open(o);
    if (!opened.ok()) return Fail(opened.status());
    std::unique_ptr<fs::embed::EmbeddingBagCollection> ebc = std::move(*opened);
    const double open_s = open_sw.Lap();
    if (*policy == fs::cache::Policy::kStatic) {
      const fs::Status s = ebc->table()->SetStaticKeys(static_keys);
      if (!s.ok()) return Fail(s);
    }
    fs::storage::RowStore* st = ebc->table()->store();
    st->ResetStats();
    const int total = batches * passes;
    int enqueued = 0;
    auto enqueue_to = [&](int upto) -> fs::Status {
      for (; enqueued < std::min(upto, total); ++enqueued) {
        FS_RETURN_IF_ERROR(ebc->Enqueue(ids[enqueued % batches], offsets));
      }
      if (enqueued == total) ebc->Close();
      return fs::Status::OK();
    };
    std::vector<PassIo> per_pass;
    fs::storage::RowStoreStats last{};
    fs::Stopwatch sw;
    for (int step = 0; step < total; ++step) {
      fs::Status s = enqueue_to(step + lookahead + 1);
      if (s.ok()) s = ebc->Forward(ctx, fs::Tensor(), &out);
      if (s.ok()) s = ebc->BackwardUpdate(ctx, sgd, grad);
      if (!s.ok()) return Fail(s);
      if ((step + 1) % batches == 0) {
        if (step + 1 == total) {
          s = ebc->Flush();  // the last pass owns the final write-back
          if (!s.ok()) return Fail(s);
        }
        const fs::storage::RowStoreStats now = st->stats();
        per_pass.push_back({now.bytes_read - last.bytes_read, now.bytes_written - last.bytes_written,
                            now.read_requests - last.read_requests, now.write_requests - last.write_requests});
        last = now;
      }
    }
    const double train_s = sw.Lap();
    const fs::cache::CacheCounters cc = ebc->table()->planner()->counters();
    PassIo all;
    std::string passes_json;
    for (size_t p = 0; p < per_pass.size(); ++p) {
      all.bytes_read += per_pass[p].bytes_read;
      all.bytes_written += per_pass[p].bytes_written;
      all.rows_read += per_pass[p].rows_read;
      all.rows_written += per_pass[p].rows_written;
      char buf[200];
      std::snprintf(buf, sizeof(buf), "%s{\"bytes_read\":%lld,\"bytes_written\":%lld,\"rows_read\":%lld,\"rows_written\":%lld}",
                    p == 0 ? "" : ",", static_cast<long long>(per_pass[p].bytes_read),
                    static_cast<long long>(per_pass[p].bytes_written), static_cast<long long>(per_pass[p].rows_read),
                    static_cast<long long>(per_pass[p].rows_written));
      passes_json += buf;
    }
    std::printf(
        "{\"bench\":\"embedding_cache_io\",\"policy\":\"%s\",\"store\":\"%s\",\"tables\":%lld,\"rows\":%lld,"
        "\"dim\":%lld,\"row_bytes\":%lld,\"batch\":%lld,\"bag\":%lld,\"zipf\":%.2f,\"batches_per_pass\":%d,"
        "\"passes\":%d,\"lookahead\":%d,\"cache_fraction\":%.3f,\"cache_slots\":%lld,\"bytes_read\":%lld,"
        "\"bytes_written\":%lld,\"rows_read\":%lld,\"rows_written\":%lld,\"hits\":%lld,\"misses\":%lld,"
        "\"hit_rate\":%.4f,\"fetches\":%lld,\"bypassed\":%lld,\"evictions\":%lld,\"writebacks\":%lld,"
        "\"create_s\":%.2f,\"train_s\":%.2f,\"per_pass\":[%s]}\n",
        name.c_str(), store.c_str(), static_cast<long long>(tables), static_cast<long long>(rows),
        static_cast<long long>(dim), static_cast<long long>(layout.row_bytes()), static_cast<long long>(batch),
        static_cast<long long>(bag), zipf, batches, passes, lookahead, cache_fraction,
        static_cast<long long>(ebc->table()->num_slots()), static_cast<long long>(all.bytes_read),
        static_cast<long long>(all.bytes_written), static_cast<long long>(all.rows_read),
        static_cast<long long>(all.rows_written), static_cast<long long>(cc.hits), static_cast<long long>(cc.misses),
        cc.hits + cc.misses > 0 ? static_cast<double>(cc.hits) / static_cast<double>(cc.hits + cc.misses) : 0.0,
        static_cast<long long>(cc.fetches), static_cast<long long>(cc.bypassed), static_cast<long long>(cc.evictions),
        static_cast<long long>(cc.writebacks), open_s, train_s, passes_json.c_str());
    std::fflush(stdout);
    ebc.reset();
    if (*kind != fs::storage::RowStoreKind::kRocksDb) std::remove(o.store.path.c_str());
    results.emplace_back(name, per_pass);
    totals.emplace_back(name, all);
  }
  // Bytes read over LRU's, per pass and in all.
  const auto lru = std::find_if(totals.begin(), totals.end(), [](const auto& t) { return t.first == "lru"; });
  if (lru != totals.end()) {
    const std::vector<PassIo>& lru_pass = results[static_cast<size_t>(lru - totals.begin())].second;
    std::string ratios;
    for (size_t i = 0; i < totals.size(); ++i) {
      std::string per;
      for (size_t p = 0; p < results[i].second.size(); ++p) {
        char buf[40];
        std::snprintf(buf, sizeof(buf), "%s%.4f", p == 0 ? "" : ",",
                      static_cast<double>(results[i].second[p].bytes_read) /
                          static_cast<double>(std::max<int64_t>(1, lru_pass[p].bytes_read)));
        per += buf;
      }
      char buf[200];
      std::snprintf(buf, sizeof(buf), "%s\"%s\":{\"bytes_read\":%.4f,\"per_pass\":[%s]}", i == 0 ? "" : ",",
                    totals[i].first.c_str(),
                    static_cast<double>(totals[i].second.bytes_read) /
                        static_cast<double>(std::max<int64_t>(1, lru->second.bytes_read)),
                    per.c_str());
      ratios += buf;
    }
    std::printf("{\"bench\":\"embedding_cache_io_vs_lru\",%s}\n", ratios.c_str());
  }
  return 0;
}
