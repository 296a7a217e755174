// Every dense RowStore backend (memory, mmap, disk on io_uring / pread /
// buffered) against a reference tensor: random batches, writes then reads,
// persistence, and the error messages of bad files and bad keys.
#include <unistd.h>

#include <cstring>
#include <random>

#include "foresight/storage/npy.h"
#include "row_store_test_util.h"

namespace foresight::storage {
namespace {

using testing::ExpectReadsMatch;
using testing::RandomRows;
using testing::RowPtr;
using testing::ScratchDir;

struct Backend {
  const char* name;
  RowStoreKind kind;
  bool force_pread = false;
  bool direct_io = true;
  bool persistent = true;  // writes reach the file
};

void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

class DenseRowStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  RowStoreOptions Options(const std::string& path, bool writable) const {
    RowStoreOptions o;
    o.kind = GetParam().kind;
    o.path = path;
    o.writable = writable;
    o.force_pread = GetParam().force_pread;
    o.direct_io = GetParam().direct_io;
    o.io_depth = 8;
    return o;
  }
  StatusOr<std::unique_ptr<RowStore>> OpenFile(const std::string& path, bool writable) const {
    return OpenRowStore(Options(path, writable));
  }
  ScratchDir dir_;
};

TEST_P(DenseRowStoreTest, ReadsMatchReference) {
  struct Layout {
    DType dtype;
    int64_t rows, width;
  };
  // 400-byte f32 rows and 74-byte f16 rows straddle 4096-byte blocks;
  // 1024-byte i64 rows are aligned; one row of 5000 bytes spans 3 blocks.
  for (const Layout& l : {Layout{DType::kF32, 1000, 100}, Layout{DType::kF16, 777, 37},
                          Layout{DType::kI64, 300, 128}, Layout{DType::kU8, 50, 5000}}) {
    SCOPED_TRACE(std::string(DTypeName(l.dtype)) + " x " + std::to_string(l.width));
    const std::string path = dir_.File(std::string("rows_") + DTypeName(l.dtype) + ".npy");
    Tensor ref = RandomRows(l.rows, l.width, l.dtype, 42 + l.width);
    ASSERT_OK(SaveNpy(path, ref));
    ASSERT_OK_AND_ASSIGN(auto store, OpenFile(path, false));
    EXPECT_EQ(store->num_rows(), l.rows);
    EXPECT_EQ(store->row_width(), l.width);
    EXPECT_EQ(store->dtype(), l.dtype);
    EXPECT_FALSE(store->writable());
    ExpectReadsMatch(store.get(), ref, 20, 64, 7);
    // Every row once, in order (long contiguous runs).
    std::vector<uint8_t> all(ref.nbytes());
    std::vector<RowRequest> reqs;
    for (int64_t r = 0; r < l.rows; ++r) reqs.push_back({r, all.data() + r * store->row_bytes()});
    ASSERT_OK(store->Read(reqs));
    EXPECT_EQ(0, std::memcmp(all.data(), ref.raw_data(), ref.nbytes()));
    EXPECT_GE(store->stats().read_requests, l.rows);
  }
}

// memory and mmap expose their rows as a host view with the file's bytes,
// which outlives the store; the disk backends have none.
TEST_P(DenseRowStoreTest, HostRowsOnlyWhereRowsAreInMemory) {
  const std::string path = dir_.File("rows.npy");
  const Tensor ref = RandomRows(33, 17, DType::kF32, 5);
  ASSERT_OK(SaveNpy(path, ref));
  ASSERT_OK_AND_ASSIGN(auto store, OpenFile(path, false));
  Tensor rows = store->host_rows();
  const RowStoreKind kind = GetParam().kind;
  if (kind != RowStoreKind::kMemory && kind != RowStoreKind::kMmap) {
    EXPECT_FALSE(rows.defined()) << GetParam().name;
    return;
  }
  ASSERT_TRUE(rows.defined());
  EXPECT_EQ(rows.dim(), 2);
  EXPECT_EQ(rows.size(0), 33);
  EXPECT_EQ(rows.size(1), 17);
  EXPECT_EQ(rows.dtype(), DType::kF32);
  EXPECT_TRUE(rows.device().is_cpu());
  store.reset();  // the view keeps the rows alive
  ASSERT_EQ(rows.nbytes(), ref.nbytes());
  EXPECT_EQ(0, std::memcmp(rows.raw_data(), ref.raw_data(), ref.nbytes()));
}

TEST_P(DenseRowStoreTest, EmptySubmissionAndUnknownTicket) {
  const std::string path = dir_.File("rows.npy");
  ASSERT_OK(SaveNpy(path, RandomRows(10, 100, DType::kF32, 1)));
  ASSERT_OK_AND_ASSIGN(auto store, OpenFile(path, false));
  ASSERT_OK_AND_ASSIGN(IoTicket t, store->SubmitRead({}, nullptr));
  EXPECT_OK(store->Wait(t));
  EXPECT_ERROR_CONTAINS(store->Wait(t), "unknown ticket");
}

TEST_P(DenseRowStoreTest, WritesThenReadsInTicketOrder) {
  const int64_t rows = 500, width = 100;  // 400-byte rows: partial blocks
  const std::string path = dir_.File("rw.npy");
  Tensor ref = RandomRows(rows, width, DType::kF32, 3);
  ASSERT_OK(SaveNpy(path, ref));
  ASSERT_OK_AND_ASSIGN(auto store, OpenFile(path, true));
  ASSERT_TRUE(store->writable());
  const size_t rb = store->row_bytes();
  std::mt19937_64 rng(11);
  for (int round = 0; round < 30; ++round) {
    // A write, a read of the same keys, a second write of some of them and a
    // read again, all queued before any Wait: each read must see the
    // writes submitted before it and none after.
    const int m = 1 + static_cast<int>(rng() % 40);
    std::vector<int64_t> keys;
    for (int i = 0; i < m; ++i) {
      int64_t k = rng() % rows;
      if (i > 0 && rng() % 2 == 0) k = std::min<int64_t>(rows - 1, keys.back() + 1);
      // Keys unique within one write submission (their order is open).
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    std::shuffle(keys.begin(), keys.end(), rng);
    Tensor w1 = RandomRows(keys.size(), width, DType::kF32, 100 + round);
    Tensor w2 = RandomRows(keys.size(), width, DType::kF32, 200 + round);
    std::vector<RowRequest> wr1, wr2, rd1, rd2;
    std::vector<uint8_t> out1(keys.size() * rb), out2(keys.size() * rb);
    for (size_t i = 0; i < keys.size(); ++i) {
      wr1.push_back({keys[i], const_cast<uint8_t*>(RowPtr(w1, i))});
      if (i % 2 == 0) wr2.push_back({keys[i], const_cast<uint8_t*>(RowPtr(w2, i))});
      rd1.push_back({keys[i], out1.data() + i * rb});
      rd2.push_back({keys[i], out2.data() + i * rb});
    }
    ASSERT_OK_AND_ASSIGN(IoTicket a, store->SubmitWrite(wr1));
    ASSERT_OK_AND_ASSIGN(IoTicket b, store->SubmitRead(rd1, nullptr));
    ASSERT_OK_AND_ASSIGN(IoTicket c, store->SubmitWrite(wr2));
    ASSERT_OK_AND_ASSIGN(IoTicket d, store->SubmitRead(rd2, nullptr));
    ASSERT_OK(store->Wait(d));
    ASSERT_OK(store->Wait(b));
    ASSERT_OK(store->Wait(a));
    ASSERT_OK(store->Wait(c));
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(0, std::memcmp(out1.data() + i * rb, RowPtr(w1, i), rb)) << "key " << keys[i];
      const Tensor& last = i % 2 == 0 ? w2 : w1;
      ASSERT_EQ(0, std::memcmp(out2.data() + i * rb, RowPtr(last, i), rb)) << "key " << keys[i];
      std::memcpy(const_cast<uint8_t*>(RowPtr(ref, keys[i])), RowPtr(last, i), rb);
    }
  }
  // Rows sharing blocks with written rows are intact.
  ExpectReadsMatch(store.get(), ref, 10, 100, 5);
  ASSERT_OK(store->Flush());
  EXPECT_GT(store->stats().write_requests, 0);
  store.reset();
  if (!GetParam().persistent) return;
  // Reopened (read-only), and read through numpy's format reader.
  ASSERT_OK_AND_ASSIGN(auto again, OpenFile(path, false));
  ExpectReadsMatch(again.get(), ref, 10, 100, 6);
  ASSERT_OK_AND_ASSIGN(Tensor loaded, LoadNpy(path));
  EXPECT_EQ(0, std::memcmp(loaded.raw_data(), ref.raw_data(), ref.nbytes()));
}

TEST_P(DenseRowStoreTest, CreateMakesZeroFilledNpy) {
  const std::string path = dir_.File("new.npy");
  RowStoreOptions o = Options(path, true);
  // A memory store creates a zero-filled table and no file.
  if (!GetParam().persistent) o.path = "";
  o.create = true;
  o.dtype = DType::kF16;
  o.row_width = 37;
  o.rows = 123;
  ASSERT_OK_AND_ASSIGN(auto store, OpenRowStore(o));
  EXPECT_EQ(store->num_rows(), 123);
  EXPECT_EQ(store->row_bytes(), 74);
  std::vector<uint8_t> row(74, 0xAB), out(74, 0xCD);
  ASSERT_OK(store->Write({{122, row.data()}}));
  ASSERT_OK(store->Read({{121, out.data()}}));
  EXPECT_EQ(out, std::vector<uint8_t>(74, 0));
  ASSERT_OK(store->Read({{122, out.data()}}));
  EXPECT_EQ(out, row);
  if (!GetParam().persistent) {
    EXPECT_NE(::access(path.c_str(), F_OK), 0) << "a memory store wrote " << path;
    return;
  }
  ASSERT_OK(store->Flush());
  store.reset();
  ASSERT_OK_AND_ASSIGN(NpyInfo info, ReadNpyHeader(path));
  EXPECT_EQ(info.shape, (Shape{123, 37}));
  EXPECT_EQ(info.dtype, DType::kF16);
  EXPECT_EQ(info.data_offset % 4096, 0u);
  // Opening again with create keeps the contents.
  ASSERT_OK_AND_ASSIGN(store, OpenRowStore(o));
  ASSERT_OK(store->Read({{122, out.data()}}));
  EXPECT_EQ(out, row);
}

TEST_P(DenseRowStoreTest, OutOfRangeKeyNamesKeyAndPosition) {
  const std::string path = dir_.File("rows.npy");
  ASSERT_OK(SaveNpy(path, RandomRows(10, 100, DType::kF32, 1)));
  ASSERT_OK_AND_ASSIGN(auto store, OpenFile(path, true));
  std::vector<uint8_t> buf(3 * 400);
  std::vector<RowRequest> reqs = {{1, buf.data()}, {9, buf.data() + 400}, {10, buf.data() + 800}};
  EXPECT_ERROR_CONTAINS(store->SubmitRead(reqs, nullptr), "key 10 at position 2",
                        "outside [0, 10)");
  reqs[2].key = -1;
  EXPECT_ERROR_CONTAINS(store->SubmitWrite(reqs), "key -1 at position 2");
  reqs[2].key = 3;
  reqs[1].data = nullptr;
  EXPECT_ERROR_CONTAINS(store->SubmitRead(reqs, nullptr), "position 1", "null buffer");
  // The store still works.
  reqs[1].data = buf.data() + 400;
  EXPECT_OK(store->Read(reqs));
}

TEST_P(DenseRowStoreTest, ReadOnlyStoreRefusesWrites) {
  const std::string path = dir_.File("rows.npy");
  ASSERT_OK(SaveNpy(path, RandomRows(10, 100, DType::kF32, 1)));
  ASSERT_OK_AND_ASSIGN(auto store, OpenFile(path, false));
  std::vector<uint8_t> buf(400);
  auto r = store->SubmitWrite({{0, buf.data()}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_ERROR_CONTAINS(r, "read-only");
}

TEST_P(DenseRowStoreTest, BadFilesNameThePath) {
  const std::string path = dir_.File("rows.npy");
  EXPECT_ERROR_CONTAINS(OpenFile(path, false), path, "no such file");
  EXPECT_ERROR_CONTAINS(OpenFile(dir_.path(), false), dir_.path(), "is a directory");
  ASSERT_OK(SaveNpy(path, RandomRows(100, 100, DType::kF32, 1)));
  // Header / option mismatch.
  RowStoreOptions o = Options(path, false);
  o.row_width = 50;
  EXPECT_ERROR_CONTAINS(OpenRowStore(o), path, "100 x f32, expected 50 x f32");
  o.row_width = 100;
  o.dtype = DType::kF16;
  EXPECT_ERROR_CONTAINS(OpenRowStore(o), path, "100 x f32, expected 100 x f16");
  // Not 2-D.
  const std::string flat = dir_.File("flat.npy");
  ASSERT_OK(SaveNpy(flat, RandomRows(100, 100, DType::kF32, 1).Reshape({10000}).value()));
  EXPECT_ERROR_CONTAINS(OpenFile(flat, false), flat, "2-D", "[10000]");
  // Truncated: the size check names the file and both sizes.
  const std::string cut = dir_.File("cut.npy");
  ASSERT_OK(SaveNpy(cut, RandomRows(100, 100, DType::kF32, 1)));
  ASSERT_OK_AND_ASSIGN(NpyInfo info, ReadNpyHeader(cut));
  const uint64_t full = info.data_offset + info.data_bytes();
  ASSERT_EQ(0, ::truncate(cut.c_str(), static_cast<off_t>(full - 1000)));
  auto r = OpenFile(cut, false);
  EXPECT_ERROR_CONTAINS(r, cut, "truncated", std::to_string(full), std::to_string(full - 1000));
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  // Not a .npy at all.
  const std::string junk = dir_.File("junk.npy");
  ::foresight::testing::WriteFile(junk, std::string(5000, 'x'));
  EXPECT_ERROR_CONTAINS(OpenFile(junk, false), junk, "not a .npy");
}

INSTANTIATE_TEST_SUITE_P(Backends, DenseRowStoreTest,
                         ::testing::Values(Backend{"memory", RowStoreKind::kMemory, false, true, false},
                                           Backend{"mmap", RowStoreKind::kMmap},
                                           Backend{"disk_uring", RowStoreKind::kDisk},
                                           Backend{"disk_pread", RowStoreKind::kDisk, true},
                                           Backend{"disk_buffered", RowStoreKind::kDisk, false, false}),
                         [](const ::testing::TestParamInfo<Backend>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace foresight::storage
