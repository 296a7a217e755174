// EmbeddingTable: the seeded initialiser, each store backend's round trip
// (rows updated through the table, flushed, reopened, read back), and
// RocksDB rows created on first touch from the seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "embed_test_util.h"
#include "testing/testing.h"

namespace foresight::embed::test {
namespace {

using kernels::EmbeddingRowLayout;
using kernels::SparseOptimizer;
using storage::RowStoreKind;

std::vector<uint8_t> InitialRow(uint64_t seed, float scale, const EmbeddingRowLayout& layout, int64_t key) {
  std::vector<uint8_t> row(static_cast<size_t>(layout.row_bytes()));
  InitializeRow(seed, scale, layout, key, row.data());
  return row;
}

TEST(EmbeddingInitTest, RowIsAFunctionOfSeedAndKey) {
  const EmbeddingRowLayout layout{10, DType::kF32, SparseOptimizer::kRowwiseAdagrad};
  EXPECT_EQ(InitialRow(7, 0.5f, layout, 3), InitialRow(7, 0.5f, layout, 3));
  EXPECT_NE(InitialRow(7, 0.5f, layout, 3), InitialRow(8, 0.5f, layout, 3));
  EXPECT_NE(InitialRow(7, 0.5f, layout, 3), InitialRow(7, 0.5f, layout, 4));
  const std::vector<uint8_t> row = InitialRow(7, 0.5f, layout, 3);
  const float* f = reinterpret_cast<const float*>(row.data());
  for (int j = 0; j < 10; ++j) {
    EXPECT_GE(f[j], -0.5f);
    EXPECT_LT(f[j], 0.5f);
  }
  EXPECT_EQ(f[10], 0.0f);  // optimizer state starts at zero
  EXPECT_FLOAT_EQ(InitScale(EmbeddingInit{}, 10000), 0.01f);
  EXPECT_FLOAT_EQ(InitScale(EmbeddingInit{1, 0.25f}, 10000), 0.25f);
}

TEST(EmbeddingInitTest, HalfRowsAreTheRoundedFloatRows) {
  const EmbeddingRowLayout f32{9, DType::kF32, SparseOptimizer::kSgd};
  const EmbeddingRowLayout f16{9, DType::kF16, SparseOptimizer::kSgd};
  const std::vector<uint8_t> a = InitialRow(3, 0.1f, f32, 42), b = InitialRow(3, 0.1f, f16, 42);
  for (int j = 0; j < 9; ++j) {
    EXPECT_EQ(reinterpret_cast<const Half*>(b.data())[j].bits,
              FloatToHalf(reinterpret_cast<const float*>(a.data())[j]));
  }
}

// Adds `delta` to the embedding of every key of a batch through the table
// (the caller's "update"), using the RowBatch it was handed.
void AddToRows(EmbeddingTable* table, const std::vector<int64_t>& keys, float delta) {
  ASSERT_OK(table->Enqueue(keys));
  ASSERT_OK_AND_ASSIGN(RowBatch b, table->Acquire());
  const EmbeddingRowLayout& l = table->layout();
  std::vector<bool> done(static_cast<size_t>(b.rows.size(0)), false);
  for (int64_t i = 0; i < b.local_ids.size(0); ++i) {
    const int64_t r = b.local_ids.data<int64_t>()[i];
    if (done[r]) continue;  // a repeated key is one row
    done[r] = true;
    float* row = b.rows.data<float>() + r * l.row_width();
    for (int64_t j = 0; j < l.dim; ++j) row[j] += delta;
  }
  ASSERT_OK(table->Release(&b, true));
}

class TableBackendTest : public ::testing::TestWithParam<RowStoreKind> {};

TEST_P(TableBackendTest, RoundTripThroughATinyCache) {
  storage::testing::ScratchDir dir;
  EmbeddingTableOptions o;
  o.rows = 50;
  o.dim = 6;
  o.optimizer = SparseOptimizer::kRowwiseAdagrad;
  o.init.seed = 11;
  o.store = StoreFor(GetParam(), dir, "t");
  o.cache.capacity_bytes = 3 * EmbeddingRowLayout{6, DType::kF32, SparseOptimizer::kRowwiseAdagrad}.row_bytes();
  o.cache.lookahead = 0;
  const std::vector<int64_t> keys = {0, 1, 2, 3, 4, 5, 49};
  std::vector<uint8_t> expected, got;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingTable> table, EmbeddingTable::Open(o));
    EXPECT_FALSE(table->direct());
    EXPECT_EQ(table->num_slots(), 3);
    AddToRows(table.get(), {1, 2, 3, 4, 1}, 1.0f);  // more rows than slots: bypass rows
    AddToRows(table.get(), {4, 5}, 2.0f);
    AddToRows(table.get(), {49, 1}, 4.0f);
    // The expected rows: the initialiser plus each key's deltas, in order.
    const EmbeddingRowLayout& l = table->layout();
    const std::vector<std::vector<float>> deltas = {{}, {1, 4}, {1}, {1}, {1, 2}, {2}, {4}};
    for (size_t i = 0; i < keys.size(); ++i) {
      std::vector<uint8_t> row = InitialRow(11, InitScale(o.init, 50), l, keys[i]);
      float* f = reinterpret_cast<float*>(row.data());
      for (float d : deltas[i]) {
        for (int64_t j = 0; j < l.dim; ++j) f[j] += d;
      }
      expected.insert(expected.end(), row.begin(), row.end());
    }
    got.resize(expected.size());
    ASSERT_OK(table->ReadRows(keys, got.data()));
    EXPECT_EQ(got, expected);
  }
  if (GetParam() == RowStoreKind::kMemory) return;  // a memory table ends with its object
  // Reopen the existing table (a checkpoint) and read the rows back.
  o.store.create = false;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingTable> again, EmbeddingTable::Open(o));
  std::fill(got.begin(), got.end(), 0);
  ASSERT_OK(again->ReadRows(keys, got.data()));
  EXPECT_EQ(got, expected);
}

TEST_P(TableBackendTest, ReadsBackWhatWasWritten) {
  storage::testing::ScratchDir dir;
  EmbeddingTableOptions o;
  o.rows = 20;
  o.dim = 4;
  o.dtype = DType::kF16;
  o.init.seed = 5;
  o.store = StoreFor(GetParam(), dir, "h");
  o.cache.capacity_bytes = 2 * EmbeddingRowLayout{4, DType::kF16, SparseOptimizer::kSgd}.row_bytes();
  o.cache.lookahead = 0;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingTable> table, EmbeddingTable::Open(o));
  ASSERT_OK(table->Enqueue(std::vector<int64_t>{7, 8, 9}));
  ASSERT_OK_AND_ASSIGN(RowBatch b, table->Acquire());
  for (int64_t i = 0; i < 3; ++i) {
    Half* row = b.rows.data<Half>() + b.local_ids.data<int64_t>()[i] * table->layout().row_width();
    row[0].bits = FloatToHalf(100.0f + i);
  }
  ASSERT_OK(table->Release(&b, true));
  std::vector<uint8_t> got(3 * table->layout().row_bytes());
  ASSERT_OK(table->ReadRows({7, 8, 9}, got.data()));
  for (int64_t i = 0; i < 3; ++i) {
    const Half* row = reinterpret_cast<const Half*>(got.data() + i * table->layout().row_bytes());
    EXPECT_EQ(HalfToFloat(row[0].bits), 100.0f + i);
    const std::vector<uint8_t> init = InitialRow(5, InitScale(o.init, 20), table->layout(), 7 + i);
    EXPECT_EQ(row[1].bits, reinterpret_cast<const Half*>(init.data())[1].bits);
  }
}

// read_ahead: the next batch is planned and read while one is out. Over
// batches drawn from a few rows behind a 3-slot cache (bypass rows that
// the next batch reads again, dirty rows evicted while a batch is out,
// batches that outgrow the bypass region while one is out, forward-only
// batches, a flush with a batch read ahead), every row ends as the
// reference computed batch by batch, and so does every mid-run read.
TEST_P(TableBackendTest, ReadAheadGivesTheSameRows) {
  storage::testing::ScratchDir dir;
  EmbeddingTableOptions o;
  o.rows = 40;
  o.dim = 4;
  o.optimizer = SparseOptimizer::kSgd;
  o.init.seed = 5;
  o.store = StoreFor(GetParam(), dir, "t");
  const EmbeddingRowLayout l{4, DType::kF32, SparseOptimizer::kSgd};
  o.cache.capacity_bytes = 3 * l.row_bytes();
  o.cache.lookahead = 2;
  o.read_ahead = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingTable> table, EmbeddingTable::Open(o));
  std::vector<std::vector<float>> want(40);
  for (int64_t k = 0; k < 40; ++k) {
    const std::vector<uint8_t> row = InitialRow(5, InitScale(o.init, 40), l, k);
    want[k].assign(reinterpret_cast<const float*>(row.data()), reinterpret_cast<const float*>(row.data()) + 4);
  }
  std::mt19937_64 rng(9);
  const int kBatches = 300;
  std::vector<std::vector<int64_t>> batches(kBatches);
  for (int t = 0; t < kBatches; ++t) {
    const int n = 1 + static_cast<int>(rng() % (t < 150 ? 6 : 14));  // later batches outgrow the bypass region
    for (int i = 0; i < n; ++i) batches[t].push_back(static_cast<int64_t>(rng() % 12) + (t % 2) * static_cast<int64_t>(rng() % 28));
  }
  int enqueued = 0;
  auto fill = [&](int upto) {
    for (; enqueued < std::min(upto, kBatches); ++enqueued) ASSERT_OK(table->Enqueue(batches[enqueued]));
    if (enqueued == kBatches) table->Close();
  };
  for (int t = 0; t < kBatches; ++t) {
    fill(t + o.cache.lookahead + 2);
    ASSERT_OK_AND_ASSIGN(RowBatch b, table->Acquire());
    const bool wrote = t % 5 != 4;  // every fifth batch only reads (evaluation)
    std::vector<bool> done(static_cast<size_t>(b.rows.size(0)), false);
    for (size_t i = 0; i < batches[t].size(); ++i) {
      const int64_t key = batches[t][i];
      const int64_t r = b.local_ids.data<int64_t>()[i];
      float* row = b.rows.data<float>() + r * l.row_width();
      for (int64_t j = 0; j < 4; ++j) ASSERT_EQ(row[j], want[key][j]) << "batch " << t << " key " << key;
      if (!wrote || done[r]) continue;
      done[r] = true;
      const float delta = 0.25f * static_cast<float>(t % 7 + 1);
      for (int64_t j = 0; j < 4; ++j) {
        row[j] += delta;
        want[key][j] += delta;
      }
    }
    ASSERT_OK(table->Release(&b, wrote));
    if (t % 25 == 0 || (t >= 150 && t < 200)) {  // a checkpoint's read while the next batch is read ahead
      std::vector<int64_t> all(40);
      for (int64_t k = 0; k < 40; ++k) all[k] = k;
      std::vector<float> got(40 * 4);
      ASSERT_OK(table->ReadRows(all, got.data()));
      for (int64_t k = 0; k < 40; ++k) {
        for (int64_t j = 0; j < 4; ++j) ASSERT_EQ(got[k * 4 + j], want[k][j]) << "key " << k;
      }
    }
  }
  std::vector<int64_t> all(40);
  for (int64_t k = 0; k < 40; ++k) all[k] = k;
  std::vector<float> got(40 * 4);
  ASSERT_OK(table->ReadRows(all, got.data()));
  for (int64_t k = 0; k < 40; ++k) {
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(got[k * 4 + j], want[k][j]) << "key " << k;
  }
}

// read_ahead, 1 slot, W = 0: batch 2 ({1, 2, 3}) is planned while batch 1
// ({5}, a bypass row) is out; it evicts batch 0's dirty row 7 and needs
// more bypass room than the arena has, so its I/O waits for its Acquire.
// A read between the batches must still see batch 0's update to row 7
// (the flush starts that I/O first).
TEST_P(TableBackendTest, ReadAheadFlushWritesRowsEvictedByAWaitingBatch) {
  storage::testing::ScratchDir dir;
  EmbeddingTableOptions o;
  o.rows = 10;
  o.dim = 4;
  o.init.seed = 2;
  o.store = StoreFor(GetParam(), dir, "t");
  const EmbeddingRowLayout l{4, DType::kF32, SparseOptimizer::kSgd};
  o.cache.capacity_bytes = l.row_bytes();
  o.cache.lookahead = 0;
  o.read_ahead = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingTable> table, EmbeddingTable::Open(o));
  ASSERT_OK(table->Enqueue(std::vector<int64_t>{7}));
  ASSERT_OK(table->Enqueue(std::vector<int64_t>{5}));
  ASSERT_OK(table->Enqueue(std::vector<int64_t>{1, 2, 3}));
  table->Close();
  std::vector<float> want;
  for (int t = 0; t < 2; ++t) {
    ASSERT_OK_AND_ASSIGN(RowBatch b, table->Acquire());
    float* row = b.rows.data<float>() + b.local_ids.data<int64_t>()[0] * l.row_width();
    for (int j = 0; j < 4; ++j) row[j] += 1.0f;
    if (t == 0) want.assign(row, row + 4);
    ASSERT_OK(table->Release(&b, true));
  }
  std::vector<float> got(4);
  ASSERT_OK(table->ReadRows({7}, got.data()));
  EXPECT_EQ(got, want);
  ASSERT_OK_AND_ASSIGN(RowBatch c, table->Acquire());
  ASSERT_OK(table->Release(&c, false));
}

INSTANTIATE_TEST_SUITE_P(Stores, TableBackendTest,
                         ::testing::Values(RowStoreKind::kMemory, RowStoreKind::kMmap, RowStoreKind::kDisk,
                                           RowStoreKind::kRocksDb),
                         [](const auto& info) { return std::string(storage::RowStoreKindName(info.param)); });

TEST(EmbeddingTableTest, RocksDbRowsAreCreatedOnFirstTouchFromTheSeed) {
  storage::testing::ScratchDir dir;
  EmbeddingTableOptions o;
  o.rows = 0;  // dynamic vocabulary: any int64 key
  o.dim = 5;
  o.optimizer = SparseOptimizer::kAdam;
  o.init.seed = 99;
  o.store = StoreFor(RowStoreKind::kRocksDb, dir, "a");
  o.cache.capacity_bytes = 0;
  o.cache.lookahead = 0;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingTable> a, EmbeddingTable::Open(o));
  o.store = StoreFor(RowStoreKind::kRocksDb, dir, "b");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingTable> b, EmbeddingTable::Open(o));
  o.store = StoreFor(RowStoreKind::kRocksDb, dir, "c");
  o.init.seed = 100;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingTable> c, EmbeddingTable::Open(o));
  const int64_t big = int64_t{1} << 50;
  const int64_t rb = a->layout().row_bytes();
  std::vector<uint8_t> ra(2 * rb), rbuf(2 * rb), rc(2 * rb);
  ASSERT_OK(a->ReadRows({big, -3}, ra.data()));
  ASSERT_OK(b->ReadRows({big, -3}, rbuf.data()));
  ASSERT_OK(c->ReadRows({big, -3}, rc.data()));
  EXPECT_EQ(ra, rbuf);  // same seed -> same initial rows
  EXPECT_NE(ra, rc);
  std::vector<uint8_t> expect = InitialRow(99, 0.01f, a->layout(), big);
  EXPECT_EQ(std::vector<uint8_t>(ra.begin(), ra.begin() + rb), expect);
  // Nothing was written by reading: the store still has no row.
  EXPECT_EQ(a->store()->stats().write_requests, 0);
  // A touched-and-updated row is stored; an untouched one stays absent.
  AddToRows(a.get(), {big}, 1.0f);
  ASSERT_OK(a->Flush());
  std::vector<uint8_t> raw(rb);
  std::vector<uint8_t> absent(2, 9);
  std::vector<uint8_t> raw2(rb);
  ASSERT_OK(a->store()->Read({{big, raw.data()}, {12345, raw2.data()}}, absent.data()));
  EXPECT_EQ(absent[0], 0);
  EXPECT_EQ(absent[1], 1);
  EXPECT_FLOAT_EQ(reinterpret_cast<float*>(raw.data())[0], reinterpret_cast<float*>(expect.data())[0] + 1.0f);
}

TEST(EmbeddingTableTest, RejectsBadUse) {
  EmbeddingTableOptions o;
  o.rows = 0;
  o.dim = 4;
  EXPECT_FALSE(EmbeddingTable::Open(o).ok());  // dynamic needs rocksdb
  o.rows = 10;
  o.store.create = true;
  o.cache.capacity_bytes = 1 << 10;
  o.cache.lookahead = 1;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingTable> t, EmbeddingTable::Open(o));
  Status s = t->Enqueue(std::vector<int64_t>{3, 10});
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("key 10 at position 1"), std::string::npos) << s.ToString();
  ASSERT_OK(t->Enqueue(std::vector<int64_t>{1}));
  // The window (lookahead 1) needs one more batch, or Close().
  EXPECT_EQ(t->Acquire().status().code(), StatusCode::kFailedPrecondition);
  t->Close();
  ASSERT_OK_AND_ASSIGN(RowBatch b, t->Acquire());
  EXPECT_EQ(t->Flush().code(), StatusCode::kFailedPrecondition);  // a batch is out
  ASSERT_OK(t->Release(&b, false));
  ASSERT_OK(t->Flush());
}

}  // namespace
}  // namespace foresight::embed::test
