// The memory backend over a caller's tensor, the kind parser and the
// factory's argument checks.
#include <cstring>

#include "row_store_test_util.h"

namespace foresight::storage {
namespace {

using testing::ExpectReadsMatch;
using testing::RandomRows;
using testing::RowPtr;

TEST(RowStoreKindTest, ParsesAndNames) {
  for (RowStoreKind k : {RowStoreKind::kMemory, RowStoreKind::kMmap, RowStoreKind::kDisk,
                         RowStoreKind::kRocksDb}) {
    ASSERT_OK_AND_ASSIGN(RowStoreKind parsed, ParseRowStoreKind(RowStoreKindName(k)));
    EXPECT_EQ(parsed, k);
  }
  EXPECT_ERROR_CONTAINS(ParseRowStoreKind("ssd"), "'ssd'", "memory, mmap, disk, rocksdb");
}

TEST(MemoryRowStoreTest, ViewsTheCallersTensor) {
  Tensor ref = RandomRows(2000, 37, DType::kF16, 9);
  Tensor rows = ref.Clone();
  ASSERT_OK_AND_ASSIGN(auto store, MemoryRowStore(rows, true));
  EXPECT_EQ(store->backend(), "memory");
  EXPECT_EQ(store->num_rows(), 2000);
  EXPECT_EQ(store->row_bytes(), 74);
  ExpectReadsMatch(store.get(), ref, 10, 3000, 1);  // large batches: pool copy
  // A write lands in the shared tensor.
  std::vector<uint8_t> row(74, 0x5A);
  ASSERT_OK(store->Write({{7, row.data()}}));
  EXPECT_EQ(0, std::memcmp(RowPtr(rows, 7), row.data(), 74));
  const RowStoreStats s = store->stats();
  EXPECT_EQ(s.write_requests, 1);
  EXPECT_EQ(s.bytes_written, 74);
  store->ResetStats();
  EXPECT_EQ(store->stats().read_requests, 0);
}

TEST(MemoryRowStoreTest, RejectsBadTensors) {
  EXPECT_ERROR_CONTAINS(MemoryRowStore(Tensor(), false), "memory row store");
  EXPECT_ERROR_CONTAINS(MemoryRowStore(Tensor::Zeros({10}, DType::kF32), false), "memory row store");
  Tensor t = Tensor::Zeros({10, 4}, DType::kF32).Transpose(0, 1);
  EXPECT_ERROR_CONTAINS(MemoryRowStore(t, false), "memory row store");
}

TEST(MemoryRowStoreTest, CreateWithoutFileIsZeroFilled) {
  RowStoreOptions o;
  o.kind = RowStoreKind::kMemory;
  o.create = true;
  o.writable = true;
  o.rows = 5;
  o.row_width = 3;
  o.dtype = DType::kI32;
  ASSERT_OK_AND_ASSIGN(auto store, OpenRowStore(o));
  int32_t out[3] = {1, 1, 1};
  ASSERT_OK(store->Read({{4, out}}));
  EXPECT_EQ(out[0] | out[1] | out[2], 0);
  o.create = false;
  EXPECT_ERROR_CONTAINS(OpenRowStore(o), "give a .npy path");
}

}  // namespace
}  // namespace foresight::storage
