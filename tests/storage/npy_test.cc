#include "foresight/storage/npy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "testing/testing.h"

namespace foresight::storage {
namespace {

using testing::TempDir;

// A host tensor of `dtype` whose element i has a value derived from i.
Tensor Pattern(const Shape& shape, DType dtype) {
  Tensor t = Tensor::Empty(shape, dtype);
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kF32: t.data<float>()[i] = 0.5f * static_cast<float>(i) - 3.25f; break;
      case DType::kF16: t.data<Half>()[i].bits = FloatToHalf(0.25f * static_cast<float>(i) - 1.0f); break;
      case DType::kI32: t.data<int32_t>()[i] = static_cast<int32_t>(i * 7 - 100); break;
      case DType::kI64: t.data<int64_t>()[i] = i * 10000000000LL - 5; break;
      case DType::kU8: t.data<uint8_t>()[i] = static_cast<uint8_t>(i * 37); break;
      case DType::kBF16: break;
    }
  }
  return t;
}

void ExpectSameBytes(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(0, std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()));
}

class NpyRoundTrip : public ::testing::TestWithParam<DType> {};

TEST_P(NpyRoundTrip, SaveLoadMmap) {
  TempDir dir;
  for (const Shape& shape : {Shape{7}, Shape{5, 3}, Shape{2, 3, 4}, Shape{0, 6}, Shape{0}}) {
    const std::string path = dir.File("a.npy");
    Tensor t = Pattern(shape, GetParam());
    ASSERT_OK(SaveNpy(path, t));
    ASSERT_OK_AND_ASSIGN(NpyInfo info, ReadNpyHeader(path));
    EXPECT_EQ(info.dtype, GetParam());
    EXPECT_EQ(info.shape, shape);
    EXPECT_FALSE(info.is_bytes);
    if (t.numel() > 0) {
      EXPECT_EQ(info.data_offset, kNpyDataAlignment);
    } else {
      EXPECT_EQ(info.data_offset % 64, 0u);  // numpy can mmap only this form
      EXPECT_LT(info.data_offset, kNpyDataAlignment);
    }
    ASSERT_OK_AND_ASSIGN(Tensor loaded, LoadNpy(path));
    ExpectSameBytes(t, loaded);
    ASSERT_OK_AND_ASSIGN(Tensor mapped, MmapNpy(path));
    ExpectSameBytes(t, mapped);
    if (t.numel() > 0) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(mapped.raw_data()) % kNpyDataAlignment, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, NpyRoundTrip,
                         ::testing::Values(DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kU8),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

TEST(Npy, MmapOutlivesEverythingButItsViews) {
  TempDir dir;
  const std::string path = dir.File("m.npy");
  ASSERT_OK(SaveNpy(path, Pattern({100, 4}, DType::kF32)));
  Tensor row;
  {
    ASSERT_OK_AND_ASSIGN(Tensor m, MmapNpy(path));
    row = m.Select(0, 99);
  }
  ASSERT_EQ(0, ::unlink(path.c_str()));  // the mapping survives the file name
  EXPECT_EQ(row.data<float>()[3], 0.5f * (99 * 4 + 3) - 3.25f);
}

TEST(Npy, ByteStringsRoundTrip) {
  TempDir dir;
  const std::string path = dir.File("s.npy");
  const char* ids[] = {"a", "bc", "defgh", ""};
  Tensor t = Tensor::Zeros({4, 5}, DType::kU8);
  for (int i = 0; i < 4; ++i) std::memcpy(t.data<uint8_t>() + i * 5, ids[i], std::strlen(ids[i]));
  ASSERT_OK(SaveNpyBytes(path, t));
  ASSERT_OK_AND_ASSIGN(NpyInfo info, ReadNpyHeader(path));
  EXPECT_TRUE(info.is_bytes);
  EXPECT_EQ(info.item_size, 5u);
  EXPECT_EQ(info.shape, (Shape{4}));
  ASSERT_OK_AND_ASSIGN(Tensor loaded, LoadNpy(path));
  ExpectSameBytes(t, loaded);
  ASSERT_OK_AND_ASSIGN(Tensor mapped, MmapNpy(path));
  ExpectSameBytes(t, mapped);
}

TEST(Npy, StreamingWriterAcrossBufferBoundaries) {
  TempDir dir;
  const std::string path = dir.File("w.npy");
  const int64_t cols = 3;
  ASSERT_OK_AND_ASSIGN(auto w, NpyWriter::Create(path, DType::kI64, {cols}));
  // Odd-sized pieces, one far larger than the write buffer, some empty.
  std::vector<int64_t> all;
  int64_t next = 0;
  for (int64_t rows : {1, 0, 1000, 7, 400000, 3, 0, 123457, 1}) {
    std::vector<int64_t> chunk(rows * cols);
    for (auto& v : chunk) v = next++;
    ASSERT_OK(w->Append(chunk.data(), rows));
    all.insert(all.end(), chunk.begin(), chunk.end());
  }
  EXPECT_EQ(w->rows(), static_cast<int64_t>(all.size()) / cols);
  ASSERT_OK(w->Finish());
  ASSERT_OK_AND_ASSIGN(Tensor t, LoadNpy(path));
  EXPECT_EQ(t.shape(), (Shape{static_cast<int64_t>(all.size()) / cols, cols}));
  EXPECT_EQ(0, std::memcmp(t.raw_data(), all.data(), all.size() * 8));
}

// The write buffer starts small and grows with the data up to its full
// size (4 MiB), then flushes: row-at-a-time appends cross every step.
TEST(Npy, StreamingWriterSmallAppendsPastTheFullBuffer) {
  TempDir dir;
  const std::string path = dir.File("s.npy");
  ASSERT_OK_AND_ASSIGN(auto w, NpyWriter::Create(path, DType::kI32, {3}));
  const int64_t rows = 700001;  // 8.4 MB of 12-byte rows
  for (int32_t r = 0; r < rows; ++r) {
    const int32_t row[3] = {r, -r, r ^ 0x5555};
    ASSERT_OK(w->Append(row, 1));
  }
  ASSERT_OK(w->Finish());
  ASSERT_OK_AND_ASSIGN(Tensor t, LoadNpy(path));
  ASSERT_EQ(t.shape(), (Shape{rows, 3}));
  const int32_t* v = t.data<int32_t>();
  for (int32_t r = 0; r < rows; ++r) {
    ASSERT_EQ(v[3 * r], r);
    ASSERT_EQ(v[3 * r + 1], -r);
    ASSERT_EQ(v[3 * r + 2], r ^ 0x5555);
  }
}

TEST(Npy, HeaderPaddingKeepsDataAlignedForWideShapes) {
  TempDir dir;
  // Many dimensions and large numbers still give a 4096-aligned data offset.
  ASSERT_OK_AND_ASSIGN(auto w, NpyWriter::Create(dir.File("x.npy"), DType::kU8,
                                                 {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2}));
  uint8_t rows[4] = {1, 2, 3, 4};
  ASSERT_OK(w->Append(rows, 2));
  ASSERT_OK(w->Finish());
  ASSERT_OK_AND_ASSIGN(NpyInfo info, ReadNpyHeader(dir.File("x.npy")));
  EXPECT_EQ(info.data_offset, kNpyDataAlignment);
  EXPECT_EQ(info.shape[0], 2);
  ASSERT_OK_AND_ASSIGN(std::string h, BuildNpyHeader("<f4", {3, 4}));
  EXPECT_EQ(h.size(), kNpyDataAlignment);
  EXPECT_EQ(h.back(), '\n');
  EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
}

TEST(Npy, WriterWithoutFinishRemovesItsFile) {
  TempDir dir;
  const std::string path = dir.File("partial.npy");
  {
    ASSERT_OK_AND_ASSIGN(auto w, NpyWriter::Create(path, DType::kF32, {2}));
    float rows[4] = {1, 2, 3, 4};
    ASSERT_OK(w->Append(rows, 2));
    EXPECT_EQ(0, ::access(path.c_str(), F_OK));
  }
  EXPECT_NE(0, ::access(path.c_str(), F_OK));
}

TEST(Npy, AppendTensorChecksDTypeAndRowShape) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto w, NpyWriter::Create(dir.File("t.npy"), DType::kF32, {3}));
  EXPECT_ERROR_CONTAINS(w->AppendTensor(Tensor::Zeros({2, 3}, DType::kI32)), "t.npy", "f32");
  EXPECT_ERROR_CONTAINS(w->AppendTensor(Tensor::Zeros({2, 4}, DType::kF32)), "t.npy");
  ASSERT_OK(w->AppendTensor(Pattern({4, 3}, DType::kF32)));
  ASSERT_OK(w->AppendTensor(Pattern({6, 3}, DType::kF32).Slice(0, 2, 4)));
  ASSERT_OK(w->Finish());
  ASSERT_OK_AND_ASSIGN(Tensor t, LoadNpy(dir.File("t.npy")));
  EXPECT_EQ(t.shape(), (Shape{6, 3}));
  EXPECT_EQ(t.data<float>()[4 * 3], 0.5f * 6 - 3.25f);
}

TEST(Npy, BFloat16HasNoNumpyDType) {
  TempDir dir;
  EXPECT_EQ(NpyWriter::Create(dir.File("b.npy"), DType::kBF16, {}).status().code(),
            StatusCode::kUnimplemented);
}

// Writes a raw .npy: preamble for `version`, then the dict text, then data.
std::string RawNpy(const std::string& dict, const std::string& data, int major = 1) {
  std::string h = "\x93NUMPY";
  h.push_back(static_cast<char>(major));
  h.push_back('\0');
  std::string text = dict;
  const size_t pre = major == 1 ? 10 : 12;
  while ((pre + text.size() + 1) % 64 != 0) text += ' ';
  text += '\n';
  const size_t n = text.size();
  h.push_back(static_cast<char>(n & 0xff));
  h.push_back(static_cast<char>((n >> 8) & 0xff));
  if (major != 1) {
    h.push_back(static_cast<char>((n >> 16) & 0xff));
    h.push_back(static_cast<char>((n >> 24) & 0xff));
  }
  return h + text + data;
}

TEST(Npy, ReadsNumpyStyleHeaders) {
  TempDir dir;
  const std::string p = dir.File("v.npy");
  int32_t vals[3] = {1, -2, 3};
  const std::string data(reinterpret_cast<char*>(vals), sizeof(vals));
  // Version 2.0, double quotes, a Python-2 long suffix, no trailing comma.
  testing::WriteFile(p, RawNpy("{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (3L,)}", data, 2));
  ASSERT_OK_AND_ASSIGN(Tensor t, LoadNpy(p));
  EXPECT_EQ(t.shape(), (Shape{3}));
  EXPECT_EQ(t.data<int32_t>()[1], -2);
  // Version 3.0 and a bool array (read as u8).
  testing::WriteFile(p, RawNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 1), }",
                               std::string("\x01\x00", 2), 3));
  ASSERT_OK_AND_ASSIGN(Tensor b, LoadNpy(p));
  EXPECT_EQ(b.dtype(), DType::kU8);
  EXPECT_EQ(b.shape(), (Shape{2, 1}));
  EXPECT_EQ(b.data<uint8_t>()[0], 1);
  // 0-d array.
  testing::WriteFile(p, RawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", std::string(4, '\0')));
  ASSERT_OK_AND_ASSIGN(NpyInfo info, ReadNpyHeader(p));
  EXPECT_TRUE(info.shape.empty());
}

TEST(Npy, TruncatedFileIsDataLossNamingFileAndSizes) {
  TempDir dir;
  const std::string path = dir.File("trunc.npy");
  ASSERT_OK(SaveNpy(path, Pattern({10, 4}, DType::kF32)));
  ASSERT_EQ(0, ::truncate(path.c_str(), 4096 + 100));
  for (auto s : {ReadNpyHeader(path).status(), LoadNpy(path).status(), MmapNpy(path).status()}) {
    EXPECT_EQ(s.code(), StatusCode::kDataLoss);
    EXPECT_ERROR_CONTAINS(s, path, "truncated", "expected 4256 bytes", "file has 4196");
  }
  // Cut inside the header too.
  ASSERT_EQ(0, ::truncate(path.c_str(), 50));
  EXPECT_ERROR_CONTAINS(ReadNpyHeader(path), path, "truncated");
}

TEST(Npy, TrailingBytesAreDataLoss) {
  TempDir dir;
  const std::string path = dir.File("long.npy");
  ASSERT_OK(SaveNpy(path, Pattern({3}, DType::kI64)));
  ASSERT_EQ(0, ::truncate(path.c_str(), 4096 + 24 + 8));
  EXPECT_ERROR_CONTAINS(ReadNpyHeader(path), path, "expected 4120 bytes", "file has 4128");
}

TEST(Npy, RejectsBadMagicVersionDTypeAndFortranOrder) {
  TempDir dir;
  const std::string p = dir.File("bad.npy");
  testing::WriteFile(p, "PK\x03\x04 this is a zip file, not an npy file");
  auto s = ReadNpyHeader(p).status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_ERROR_CONTAINS(s, p, "bad magic");

  testing::WriteFile(p, RawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'), 4));
  EXPECT_ERROR_CONTAINS(ReadNpyHeader(p), p, "version 4.0");

  testing::WriteFile(p, RawNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", std::string(16, '\0')));
  s = ReadNpyHeader(p).status();
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_ERROR_CONTAINS(s, p, "Fortran-order");

  testing::WriteFile(p, RawNpy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')));
  EXPECT_ERROR_CONTAINS(ReadNpyHeader(p), p, "'<c8' is not supported");
  testing::WriteFile(p, RawNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0')));
  EXPECT_ERROR_CONTAINS(ReadNpyHeader(p), p, "big-endian");
  testing::WriteFile(p, RawNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0')));
  EXPECT_ERROR_CONTAINS(ReadNpyHeader(p), p, "structured");
  testing::WriteFile(p, RawNpy("{'descr': '<f4', 'shape': (1,), }", std::string(4, '\0')));
  EXPECT_ERROR_CONTAINS(ReadNpyHeader(p), p, "missing 'fortran_order'");
  testing::WriteFile(p, RawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", ""));
  EXPECT_ERROR_CONTAINS(ReadNpyHeader(p), p, "malformed");
}

TEST(Npy, MissingFileIsNotFound) {
  TempDir dir;
  auto s = LoadNpy(dir.File("nope.npy")).status();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_ERROR_CONTAINS(s, "nope.npy");
}

TEST(Npy, UnreadableFileNamesTheFile) {
  TempDir dir;
  const std::string path = dir.File("secret.npy");
  ASSERT_OK(SaveNpy(path, Pattern({3}, DType::kF32)));
  ASSERT_EQ(0, ::chmod(path.c_str(), 0));
  // Root ignores file modes: the body runs as nobody when the test is root.
  testing::RunUnprivileged({dir.path()}, [&] { EXPECT_ERROR_CONTAINS(LoadNpy(path), path, "Permission denied"); });
}

TEST(Npy, LargeMmapStartsOnAHugePageAndMatchesLoad) {
  // >= 2 MiB maps take the aligned, MADV_HUGEPAGE path of MmapNpy.
  TempDir dir;
  const std::string path = dir.File("big.npy");
  const Tensor t = Pattern({(3 << 20) / 16 + 5, 4}, DType::kF32);  // a little over 3 MiB
  ASSERT_OK(SaveNpy(path, t));
  NpyInfo info;
  ASSERT_OK_AND_ASSIGN(Tensor mapped, MmapNpy(path, &info));
  ASSERT_OK_AND_ASSIGN(Tensor loaded, LoadNpy(path));
  ASSERT_EQ(mapped.shape(), t.shape());
  EXPECT_EQ(0, std::memcmp(mapped.raw_data(), t.raw_data(), t.nbytes()));
  EXPECT_EQ(0, std::memcmp(loaded.raw_data(), t.raw_data(), t.nbytes()));
  const auto file_start = reinterpret_cast<uintptr_t>(mapped.raw_data()) - info.data_offset;
  EXPECT_EQ(file_start % (2 << 20), 0u) << "the file is not mapped at a 2 MiB boundary";
  // The last byte is readable (the mapping covers the whole file).
  EXPECT_EQ(static_cast<const char*>(mapped.raw_data())[t.nbytes() - 1],
            static_cast<const char*>(t.raw_data())[t.nbytes() - 1]);
}

TEST(Npy, WriteErrorNamesTheFile) {
  // /dev/full fails every write with ENOSPC: a cheap disk-full simulation.
  ASSERT_EQ(::access("/dev/full", W_OK), 0) << "/dev/full (every Linux system's ENOSPC device) is not writable: "
                                            << std::strerror(errno);
  {
    ASSERT_OK_AND_ASSIGN(auto w, NpyWriter::Create("/dev/full", DType::kF32, {1024}));
    std::vector<float> rows(2048 * 1024);  // larger than the write buffer
    Status s = w->Append(rows.data(), 2048);
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
    EXPECT_ERROR_CONTAINS(s, "/dev/full", "No space left");
    EXPECT_ERROR_CONTAINS(w->Append(rows.data(), 1), "/dev/full");  // stays failed
    EXPECT_ERROR_CONTAINS(w->Finish(), "/dev/full");
  }
  struct stat st;
  ASSERT_EQ(0, ::stat("/dev/full", &st)) << "the writer must never unlink a device";
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(Npy, SaveIsAtomicOverAnOldFile) {
  TempDir dir;
  const std::string path = dir.File("a.npy");
  ASSERT_OK(SaveNpy(path, Pattern({3}, DType::kI32)));
  ASSERT_OK(SaveNpy(path, Pattern({5}, DType::kI64)));
  ASSERT_OK_AND_ASSIGN(Tensor t, LoadNpy(path));
  EXPECT_EQ(t.shape(), (Shape{5}));
  EXPECT_EQ(t.dtype(), DType::kI64);
  // No temporary files are left beside it.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename(), "a.npy");
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

}  // namespace
}  // namespace foresight::storage
