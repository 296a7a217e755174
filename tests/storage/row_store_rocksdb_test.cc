// The rocksdb backend: sparse (negative, huge) keys, absent rows, layout
// metadata, persistence across reopen, and values of the wrong size.
#include <rocksdb/db.h>

#include <cstring>
#include <map>
#include <random>

#include "row_store_test_util.h"

namespace foresight::storage {
namespace {

using testing::ExpectReadsMatch;
using testing::RandomRows;
using testing::RowPtr;
using testing::ScratchDir;

class RocksDbRowStoreTest : public ::testing::Test {
 protected:
  RowStoreOptions Options(bool create, int64_t width = 100, DType dtype = DType::kF32) const {
    RowStoreOptions o;
    o.kind = RowStoreKind::kRocksDb;
    o.path = dir_.File("db");
    o.writable = true;
    o.create = create;
    o.row_width = width;
    o.dtype = dtype;
    return o;
  }
  ScratchDir dir_;
};

TEST_F(RocksDbRowStoreTest, DenseTableReadsMatchReference) {
  Tensor ref = RandomRows(600, 37, DType::kF16, 4);
  ASSERT_OK_AND_ASSIGN(auto store, OpenRowStore(Options(true, 37, DType::kF16)));
  EXPECT_EQ(store->num_rows(), -1);
  EXPECT_EQ(store->backend(), "rocksdb");
  std::vector<RowRequest> reqs;
  for (int64_t r = 599; r >= 0; --r) reqs.push_back({r, const_cast<uint8_t*>(RowPtr(ref, r))});
  ASSERT_OK(store->Write(reqs));
  ExpectReadsMatch(store.get(), ref, 20, 64, 3);
  const RowStoreStats s = store->stats();
  EXPECT_EQ(s.write_requests, 600);
  EXPECT_EQ(s.bytes_written, 600 * 74);
  EXPECT_EQ(s.absent_rows, 0);
}

TEST_F(RocksDbRowStoreTest, SparseKeysAbsentRowsAndReopen) {
  const std::vector<int64_t> keys = {-5, 0, 1, 1LL << 40, INT64_MAX, INT64_MIN, 77};
  Tensor rows = RandomRows(keys.size(), 100, DType::kF32, 8);
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenRowStore(Options(true)));
    std::vector<RowRequest> w;
    for (size_t i = 0; i < keys.size(); ++i) w.push_back({keys[i], const_cast<uint8_t*>(RowPtr(rows, i))});
    // Write, read in the same ticket order: the read sees the write.
    std::vector<uint8_t> out(keys.size() * 400);
    std::vector<RowRequest> r;
    for (size_t i = 0; i < keys.size(); ++i) r.push_back({keys[i], out.data() + i * 400});
    ASSERT_OK_AND_ASSIGN(IoTicket tw, store->SubmitWrite(w));
    ASSERT_OK_AND_ASSIGN(IoTicket tr, store->SubmitRead(r, nullptr));
    ASSERT_OK(store->Wait(tr));
    ASSERT_OK(store->Wait(tw));
    EXPECT_EQ(0, std::memcmp(out.data(), rows.raw_data(), rows.nbytes()));
    ASSERT_OK(store->Flush());
  }
  // Reopened read-only, layout taken from the database.
  RowStoreOptions o = Options(false, 0);
  o.writable = false;
  ASSERT_OK_AND_ASSIGN(auto store, OpenRowStore(o));
  EXPECT_EQ(store->row_width(), 100);
  EXPECT_EQ(store->dtype(), DType::kF32);
  EXPECT_FALSE(store->writable());
  std::vector<uint8_t> out(4 * 400, 0xEE);
  std::vector<RowRequest> r = {{INT64_MIN, out.data()}, {2, out.data() + 400},
                               {-5, out.data() + 800}, {-6, out.data() + 1200}};
  std::vector<uint8_t> absent(4, 9);
  ASSERT_OK(store->Read(r, absent.data()));
  EXPECT_EQ(absent, (std::vector<uint8_t>{0, 1, 0, 1}));
  EXPECT_EQ(0, std::memcmp(out.data(), RowPtr(rows, 5), 400));
  EXPECT_EQ(0, std::memcmp(out.data() + 800, RowPtr(rows, 0), 400));
  // Absent rows' buffers are untouched.
  EXPECT_EQ(std::vector<uint8_t>(out.begin() + 400, out.begin() + 800), std::vector<uint8_t>(400, 0xEE));
  EXPECT_EQ(std::vector<uint8_t>(out.begin() + 1200, out.end()), std::vector<uint8_t>(400, 0xEE));
  EXPECT_EQ(store->stats().absent_rows, 2);
  // Without an absent array a missing key is NotFound naming it.
  const Status s = store->Read(r);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_ERROR_CONTAINS(s, "key 2 at position 1", "no row");
  // Read-only refuses writes.
  auto w = store->SubmitWrite({{1, out.data()}});
  EXPECT_EQ(w.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_ERROR_CONTAINS(w, "read-only");
}

TEST_F(RocksDbRowStoreTest, LaterWritesWinAndTicketsAreOrdered) {
  ASSERT_OK_AND_ASSIGN(auto store, OpenRowStore(Options(true, 4, DType::kI32)));
  int32_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, out[4] = {0, 0, 0, 0};
  ASSERT_OK_AND_ASSIGN(IoTicket t1, store->SubmitWrite({{9, a}}));
  ASSERT_OK_AND_ASSIGN(IoTicket t2, store->SubmitWrite({{9, b}}));
  ASSERT_OK_AND_ASSIGN(IoTicket t3, store->SubmitRead({{9, out}}, nullptr));
  ASSERT_OK(store->Wait(t3));
  ASSERT_OK(store->Wait(t1));
  ASSERT_OK(store->Wait(t2));
  EXPECT_EQ(std::memcmp(out, b, 16), 0);
  EXPECT_ERROR_CONTAINS(store->Wait(t2), "unknown ticket");
}

TEST_F(RocksDbRowStoreTest, LayoutIsCheckedOnReopen) {
  { ASSERT_OK_AND_ASSIGN(auto store, OpenRowStore(Options(true, 100))); }
  EXPECT_ERROR_CONTAINS(OpenRowStore(Options(false, 64)), "100 x f32, expected 64 x f32");
  EXPECT_ERROR_CONTAINS(OpenRowStore(Options(true, 100, DType::kF16)), "100 x f32, expected 100 x f16");
  ASSERT_OK(OpenRowStore(Options(true, 100)).status());  // create on an existing table: opens it
}

TEST_F(RocksDbRowStoreTest, MissingAndForeignDatabases) {
  RowStoreOptions o = Options(false);
  EXPECT_ERROR_CONTAINS(OpenRowStore(o), o.path, "no such RocksDB database");
  o = Options(true, 0);
  EXPECT_ERROR_CONTAINS(OpenRowStore(o), "row_width > 0");
  const std::string file = dir_.File("plain");
  ::foresight::testing::WriteFile(file, "x");
  o = Options(false);
  o.path = file;
  EXPECT_ERROR_CONTAINS(OpenRowStore(o), file, "not a directory");
  // A RocksDB database foresight did not make.
  {
    rocksdb::Options ro;
    ro.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(ro, dir_.File("foreign"), &db).ok());
    delete db;
  }
  o = Options(false);
  o.path = dir_.File("foreign");
  EXPECT_ERROR_CONTAINS(OpenRowStore(o), o.path, "not a foresight row store");
}

TEST_F(RocksDbRowStoreTest, WrongSizedValueIsDataLossNamingTheKey) {
  const std::string path = dir_.File("db");
  { ASSERT_OK_AND_ASSIGN(auto store, OpenRowStore(Options(true, 100))); }
  {
    // Put a 3-byte value under key 42's encoding (sign bit flipped, big endian).
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), path, &db).ok());
    const char key[8] = {'\x80', 0, 0, 0, 0, 0, 0, 42};
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), rocksdb::Slice(key, 8), "abc").ok());
    delete db;
  }
  ASSERT_OK_AND_ASSIGN(auto store, OpenRowStore(Options(false, 100)));
  std::vector<uint8_t> out(400);
  const Status s = store->Read({{42, out.data()}});
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_ERROR_CONTAINS(s, "key 42 holds 3 bytes, expected a row of 400");
}

}  // namespace
}  // namespace foresight::storage
