// A disk table's rows not written since it was created are computed from
// the seed, never read (embed's InitialRowsStore): a first touch reads
// nothing, a write-back whose block holds no other written row writes the
// block whole without reading it, and any other write (a row already
// written beside it; a checkpoint's rows loaded through store()) goes to
// the disk and is read back from it.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "embed_test_util.h"
#include "foresight/storage/npy.h"
#include "testing/testing.h"

namespace foresight::embed::test {
namespace {

using kernels::EmbeddingRowLayout;
using kernels::SparseOptimizer;
using storage::RowStoreKind;

constexpr int64_t kRows = 40;  // blocks of 16 rows: [0, 16), [16, 32), [32, 40) (the file's last, partial)
constexpr int64_t kDim = 64;   // f32, SGD: 256-byte rows, 16 to a 4 KiB block
constexpr uint64_t kSeed = 21;

// A disk table with no cache slots: every row is read around the cache at
// Acquire and written back at Release (wrote), one batch at a time, so
// each batch's I/O is known exactly.
std::unique_ptr<EmbeddingTable> OpenDiskTable(const storage::testing::ScratchDir& dir) {
  EmbeddingTableOptions o;
  o.rows = kRows;
  o.dim = kDim;
  o.init.seed = kSeed;
  o.store = StoreFor(RowStoreKind::kDisk, dir, "t");
  o.cache.capacity_bytes = 0;
  o.cache.lookahead = 0;
  o.cache.policy = cache::Policy::kLru;
  auto table = EmbeddingTable::Open(o);
  EXPECT_OK(table.status());
  return table.ok() ? std::move(table).value() : nullptr;
}

std::vector<float> InitialEmbedding(int64_t key) {
  const EmbeddingRowLayout layout{kDim, DType::kF32, SparseOptimizer::kSgd};
  std::vector<float> row(static_cast<size_t>(layout.row_width()));
  InitializeRow(kSeed, InitScale(EmbeddingInit{kSeed, 0.0f}, kRows), layout, key, row.data());
  return row;
}

// One batch of `keys`: checks that its rows arrive as `expect` (per key),
// then adds `delta` to each row's first value and releases it written.
void Step(EmbeddingTable* table, const std::vector<int64_t>& keys, const std::vector<std::vector<float>>& expect,
          float delta) {
  ASSERT_OK(table->Enqueue(keys));
  ASSERT_OK_AND_ASSIGN(RowBatch b, table->Acquire());
  for (size_t i = 0; i < keys.size(); ++i) {
    float* row = b.rows.data<float>() + b.local_ids.data<int64_t>()[i] * kDim;
    EXPECT_EQ(std::vector<float>(row, row + kDim), expect[i]) << "key " << keys[i];
    row[0] += delta;
  }
  ASSERT_OK(table->Release(&b, true));
}

std::vector<float> Plus(std::vector<float> row, float delta) {
  row[0] += delta;
  return row;
}

TEST(InitialRowsTest, DiskBlocksTileRows) {
  storage::testing::ScratchDir dir;
  std::unique_ptr<EmbeddingTable> table = OpenDiskTable(dir);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->store()->write_block_rows(), 16);
}

TEST(InitialRowsTest, AFirstTouchReadsNothing) {
  storage::testing::ScratchDir dir;
  std::unique_ptr<EmbeddingTable> table = OpenDiskTable(dir);
  ASSERT_NE(table, nullptr);
  table->store()->ResetStats();  // creation wrote every row
  ASSERT_OK(table->Enqueue(std::vector<int64_t>{3, 20, 39, 3}));
  ASSERT_OK_AND_ASSIGN(RowBatch b, table->Acquire());
  for (const int64_t i : {0, 1, 2}) {
    const int64_t key = std::vector<int64_t>{3, 20, 39}[i];
    const float* row = b.rows.data<float>() + b.local_ids.data<int64_t>()[i] * kDim;
    EXPECT_EQ(std::vector<float>(row, row + kDim), InitialEmbedding(key)) << "key " << key;
  }
  ASSERT_OK(table->Release(&b, false));
  const storage::RowStoreStats s = table->store()->stats();
  EXPECT_EQ(s.device_reads, 0);
  EXPECT_EQ(s.bytes_read, 0);
  EXPECT_EQ(s.rows_initialized, 3);
  EXPECT_EQ(s.read_requests, 3);
}

TEST(InitialRowsTest, AWriteBackIntoABlockOfUnwrittenRowsReadsNothing) {
  storage::testing::ScratchDir dir;
  std::unique_ptr<EmbeddingTable> table = OpenDiskTable(dir);
  ASSERT_NE(table, nullptr);
  table->store()->ResetStats();
  // Row 5 alone in block 0, rows 33 and 38 in the last, partial block.
  Step(table.get(), {5, 33, 38}, {InitialEmbedding(5), InitialEmbedding(33), InitialEmbedding(38)}, 1.0f);
  storage::RowStoreStats s = table->store()->stats();
  EXPECT_EQ(s.device_reads, 0);
  EXPECT_EQ(s.bytes_read, 0);
  EXPECT_EQ(s.device_writes, 2);
  // Row 6 shares block 0 with row 5, which is written: read-modify-write.
  Step(table.get(), {6}, {InitialEmbedding(6)}, 2.0f);
  s = table->store()->stats();
  EXPECT_EQ(s.device_reads, 1);
  EXPECT_EQ(s.bytes_read, 4096);
  // Written rows come back from the disk, unwritten ones from the seed.
  Step(table.get(), {5, 6, 7, 33, 34},
       {Plus(InitialEmbedding(5), 1.0f), Plus(InitialEmbedding(6), 2.0f), InitialEmbedding(7),
        Plus(InitialEmbedding(33), 1.0f), InitialEmbedding(34)},
       0.0f);
  ASSERT_OK(table->Flush());
  // The file itself holds every row: the written ones, and the initial
  // values the whole-block writes carried around them.
  ASSERT_OK_AND_ASSIGN(Tensor file, storage::MmapNpy(dir.File("t.npy")));
  for (int64_t key = 0; key < kRows; ++key) {
    std::vector<float> expect = InitialEmbedding(key);
    if (key == 5 || key == 33 || key == 38) expect[0] += 1.0f;
    if (key == 6) expect[0] += 2.0f;
    const float* row = file.data<float>() + key * kDim;
    EXPECT_EQ(std::vector<float>(row, row + kDim), expect) << "key " << key;
  }
}

TEST(InitialRowsTest, RowsWrittenThroughTheStoreAreReadFromIt) {
  storage::testing::ScratchDir dir;
  std::unique_ptr<EmbeddingTable> table = OpenDiskTable(dir);
  ASSERT_NE(table, nullptr);
  // As a checkpoint's rows are loaded: straight into the store.
  std::vector<float> saved(kDim, 0.5f);
  ASSERT_OK(table->store()->Write({{9, saved.data()}}));
  table->store()->ResetStats();
  std::vector<float> got(2 * kDim);
  ASSERT_OK(table->ReadRows({9, 10}, got.data()));
  EXPECT_EQ(std::vector<float>(got.begin(), got.begin() + kDim), saved);
  EXPECT_EQ(std::vector<float>(got.begin() + kDim, got.end()), InitialEmbedding(10));
  EXPECT_EQ(table->store()->stats().rows_initialized, 1);
  EXPECT_EQ(table->store()->stats().bytes_read, 4096);
}

}  // namespace
}  // namespace foresight::embed::test
