// Compatibility with numpy itself: files foresight writes open in numpy
// (np.load mmap_mode='r'), and files numpy writes open in foresight. Skipped
// with a message when no python3 with numpy is installed.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "foresight/storage/npy.h"
#include "testing/testing.h"

namespace foresight::storage {
namespace {

using testing::TempDir;

std::string FindPythonWithNumpy() {
  for (const char* py : {"/usr/bin/python3", "python3"}) {
    const std::string cmd = std::string(py) + " -c \"import numpy\" >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return py;
  }
  return "";
}

// Runs `script` with python; returns its exit status and appends its output.
int RunPython(const std::string& py, const std::string& script_path, std::string* output) {
  const std::string cmd = py + " " + script_path + " 2>&1";
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) output->append(buf, n);
  return ::pclose(f);
}

template <typename T, typename F>
Tensor Make(const Shape& shape, F value) {
  Tensor t = Tensor::Empty(shape, DTypeOf<T>::value);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = value(i);
  return t;
}

TEST(NpyNumpy, ForesightFilesOpenInNumpyAndBack) {
  const std::string py = FindPythonWithNumpy();
  // .ci/install-deps installs python3-numpy: numpy is part of the format's contract.
  ASSERT_FALSE(py.empty()) << "python3 with numpy not found; install python3-numpy (bash .ci/install-deps)";
  TempDir dir;

  // foresight -> numpy, one file per dtype, written with NpyWriter.
  auto write = [&](const std::string& name, const Tensor& t) {
    Shape inner(t.shape().begin() + 1, t.shape().end());
    auto w = NpyWriter::Create(dir.File(name), t.dtype(), inner);
    ASSERT_OK(w.status());
    // Two appends, so the header rewrite with the final count is exercised.
    const int64_t half = t.size(0) / 2;
    ASSERT_OK((*w)->Append(t.raw_data(), half));
    ASSERT_OK((*w)->Append(static_cast<const char*>(t.raw_data()) + half * (*w)->row_bytes(), t.size(0) - half));
    ASSERT_OK((*w)->Finish());
  };
  write("f32.npy", Make<float>({5, 3}, [](int64_t i) { return 0.5f * i - 3.0f; }));
  write("f16.npy", Make<Half>({4, 2}, [](int64_t i) { return Half{FloatToHalf(0.25f * i - 1.0f)}; }));
  write("i32.npy", Make<int32_t>({7}, [](int64_t i) { return int32_t(i * 7 - 20); }));
  write("i64.npy", Make<int64_t>({3, 2, 2}, [](int64_t i) { return i * 10000000000LL - 5; }));
  write("u8.npy", Make<uint8_t>({6}, [](int64_t i) { return uint8_t(i * 37); }));
  write("empty.npy", Tensor::Empty({0, 4}, DType::kF32));
  {
    ASSERT_OK_AND_ASSIGN(auto w, NpyWriter::CreateBytes(dir.File("s.npy"), 5));
    const char rows[] = "a\0\0\0\0bc\0\0\0defgh";
    ASSERT_OK(w->Append(rows, 3));
    ASSERT_OK(w->Finish());
  }

  const std::string script = dir.File("check.py");
  testing::WriteFile(script, R"PY(
import sys, numpy as np
d = sys.argv[1] if len(sys.argv) > 1 else ')PY" + dir.path() + R"PY('
def load(name, dtype, shape):
    a = np.load(d + '/' + name, mmap_mode='r')
    assert a.dtype == np.dtype(dtype), (name, a.dtype, dtype)
    assert a.shape == shape, (name, a.shape, shape)
    assert a.offset % (4096 if a.size else 64) == 0, (name, a.offset)
    return np.array(a)
i = np.arange
assert (load('f32.npy', '<f4', (5, 3)) == (0.5 * i(15) - 3.0).reshape(5, 3)).all()
assert (load('f16.npy', '<f2', (4, 2)) == (0.25 * i(8) - 1.0).astype(np.float16).reshape(4, 2)).all()
assert (load('i32.npy', '<i4', (7,)) == i(7) * 7 - 20).all()
assert (load('i64.npy', '<i8', (3, 2, 2)) == (i(12, dtype=np.int64) * 10000000000 - 5).reshape(3, 2, 2)).all()
assert (load('u8.npy', '|u1', (6,)) == (i(6) * 37).astype(np.uint8)).all()
assert load('empty.npy', '<f4', (0, 4)).size == 0
assert list(load('s.npy', '|S5', (3,))) == [b'a', b'bc', b'defgh']
# numpy -> foresight
np.save(d + '/np_f32.npy', (i(12, dtype=np.float32) * 1.5).reshape(4, 3))
np.save(d + '/np_f16.npy', i(5).astype(np.float16))
np.save(d + '/np_i32.npy', -i(6, dtype=np.int32))
np.save(d + '/np_i64.npy', i(4, dtype=np.int64) << 40)
np.save(d + '/np_u8.npy', i(3, dtype=np.uint8))
np.save(d + '/np_bool.npy', np.array([True, False, True]))
np.save(d + '/np_str.npy', np.array([b'x', b'yz', b'']))
np.save(d + '/np_fortran.npy', np.asfortranarray(np.ones((3, 2), dtype=np.float32)))
with open(d + '/np_v2.npy', 'wb') as f:
    np.lib.format.write_array(f, i(3, dtype=np.int64), version=(2, 0))
print('numpy checks passed')
)PY");
  std::string out;
  const int rc = RunPython(py, script, &out);
  ASSERT_EQ(rc, 0) << "numpy check failed:\n" << out;

  ASSERT_OK_AND_ASSIGN(Tensor f32, LoadNpy(dir.File("np_f32.npy")));
  ASSERT_EQ(f32.shape(), (Shape{4, 3}));
  for (int k = 0; k < 12; ++k) EXPECT_EQ(f32.data<float>()[k], 1.5f * k);
  ASSERT_OK_AND_ASSIGN(Tensor f16, MmapNpy(dir.File("np_f16.npy")));
  ASSERT_EQ(f16.dtype(), DType::kF16);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(HalfToFloat(f16.data<Half>()[k].bits), float(k));
  ASSERT_OK_AND_ASSIGN(Tensor i32, MmapNpy(dir.File("np_i32.npy")));
  for (int k = 0; k < 6; ++k) EXPECT_EQ(i32.data<int32_t>()[k], -k);
  ASSERT_OK_AND_ASSIGN(Tensor i64, LoadNpy(dir.File("np_i64.npy")));
  for (int k = 0; k < 4; ++k) EXPECT_EQ(i64.data<int64_t>()[k], int64_t(k) << 40);
  ASSERT_OK_AND_ASSIGN(Tensor u8, LoadNpy(dir.File("np_u8.npy")));
  EXPECT_EQ(u8.data<uint8_t>()[2], 2);
  ASSERT_OK_AND_ASSIGN(Tensor b, LoadNpy(dir.File("np_bool.npy")));
  EXPECT_EQ(b.dtype(), DType::kU8);
  EXPECT_EQ(b.data<uint8_t>()[0], 1);
  EXPECT_EQ(b.data<uint8_t>()[1], 0);
  ASSERT_OK_AND_ASSIGN(NpyInfo sinfo, ReadNpyHeader(dir.File("np_str.npy")));
  EXPECT_TRUE(sinfo.is_bytes);
  EXPECT_EQ(sinfo.item_size, 2u);
  ASSERT_OK_AND_ASSIGN(Tensor s, LoadNpy(dir.File("np_str.npy")));
  ASSERT_EQ(s.shape(), (Shape{3, 2}));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(s.data<uint8_t>()), 6), std::string("x\0yz\0\0", 6));
  EXPECT_ERROR_CONTAINS(LoadNpy(dir.File("np_fortran.npy")), "np_fortran.npy", "Fortran-order");
  ASSERT_OK_AND_ASSIGN(Tensor v2, LoadNpy(dir.File("np_v2.npy")));
  EXPECT_EQ(v2.data<int64_t>()[2], 2);
}

}  // namespace
}  // namespace foresight::storage
