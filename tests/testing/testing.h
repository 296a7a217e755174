// Shared test helpers: Status assertions, temporary directories, paths to
// the source tree and ../shared/datasets.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

#define ASSERT_OK(expr)                                         \
  do {                                                          \
    const ::foresight::Status fs_s_ = (expr);                   \
    ASSERT_TRUE(fs_s_.ok()) << #expr << ": " << fs_s_.ToString(); \
  } while (0)
#define EXPECT_OK(expr)                                         \
  do {                                                          \
    const ::foresight::Status fs_s_ = (expr);                   \
    EXPECT_TRUE(fs_s_.ok()) << #expr << ": " << fs_s_.ToString(); \
  } while (0)
// ASSERT_OK_AND_ASSIGN(auto x, MakeX());
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(FS_CONCAT_(fs_t_sor_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr)                       \
  auto tmp = (expr);                                                     \
  ASSERT_TRUE(tmp.ok()) << #expr << ": " << tmp.status().ToString();     \
  lhs = std::move(tmp).value()

// Asserts that `expr` (a Status or StatusOr) failed with a message that
// contains every one of the given substrings.
#define EXPECT_ERROR_CONTAINS(expr, ...) \
  ::foresight::testing::ExpectErrorContains(::foresight::testing::ToStatus(expr), #expr, {__VA_ARGS__})

namespace foresight::testing {

inline Status ToStatus(const Status& s) { return s; }
template <typename T> Status ToStatus(const StatusOr<T>& s) { return s.status(); }
void ExpectErrorContains(const Status& s, const char* expr, std::initializer_list<std::string> parts);

// A fresh directory under $TMPDIR, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& contents);
std::string ReadFile(const std::string& path);
// A 1-D host tensor holding `v` (its dtype from T).
template <typename T>
Tensor TensorOf(const std::vector<T>& v) {
  Tensor t = Tensor::Empty({static_cast<int64_t>(v.size())}, DTypeOf<T>::value);
  if (!v.empty()) std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(T));
  return t;
}
// The elements of a 1-D host tensor of T (any stride), in order: the
// inverse of TensorOf.
template <typename T>
std::vector<T> VectorOf(const Tensor& t) {
  std::vector<T> v(static_cast<size_t>(t.numel()));
  const T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = p[i * t.stride(0)];
  return v;
}
// The elements of an i32 or i64 tensor (ids, labels), as int64.
std::vector<int64_t> Ints(const Tensor& t);
// The rows of a 2-D u8 tensor of fixed-width strings ('|S<w>' .npy arrays:
// string ids, vocabularies), each up to its first NUL.
std::vector<std::string> Strings(const Tensor& t);
std::string SourceDir();  // the repository root
std::string BinaryDir();  // the build directory
// Runs `body` without the privileges that let root ignore file modes, so
// tests of "Permission denied" paths run in CI (which runs as root). `body`
// runs in a forked child, which drops to uid/gid 65534 (nobody) when the
// caller is root; its gtest failures (file, line, message) come back through
// a pipe and are reported in the calling test, as is a crash or a
// GTEST_SKIP. `accessible` lists paths the child must read or write: each
// is chowned (recursively) to nobody before a root caller's child runs and
// back to root after, so a TempDir's 0700 directory is usable; file modes are kept, so a
// chmod 0 file stays unreadable to the child. Call it from the test thread
// while no other thread of the test holds a lock the child could need.
void RunUnprivileged(const std::vector<std::string>& accessible, const std::function<void()>& body);

// ../shared/datasets/<name> when present, else "" (tests then GTEST_SKIP
// with a message).
std::string SharedDataset(const std::string& name);

}  // namespace foresight::testing

namespace foresight {
// How gtest shows a DType test parameter (found by argument-dependent
// lookup), instead of its byte.
inline void PrintTo(DType t, std::ostream* os) { *os << DTypeName(t); }
}  // namespace foresight
