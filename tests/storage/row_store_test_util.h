// Helpers shared by the row store tests: reference row tensors, a scratch
// directory on a real file system (O_DIRECT does not work on tmpfs), and a
// checker that reads random batches and compares them byte for byte.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "foresight/storage/row_store.h"
#include "testing/testing.h"

namespace foresight::storage::testing {

// A fresh directory under the build directory (not $TMPDIR, which may be a
// tmpfs), removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    const std::string base = ::foresight::testing::BinaryDir() + "/test-scratch";
    std::filesystem::create_directories(base);
    std::string tmpl = base + "/row-store-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << tmpl;
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// rows x width random bytes (every dtype is compared bytewise).
inline Tensor RandomRows(int64_t rows, int64_t width, DType dtype, uint64_t seed) {
  Tensor t = Tensor::Empty({rows, width}, dtype);
  std::mt19937_64 rng(seed);
  uint8_t* p = static_cast<uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(rng() >> 24);
  return t;
}

inline const uint8_t* RowPtr(const Tensor& t, int64_t row) {
  return static_cast<const uint8_t*>(t.raw_data()) + size_t(row) * size_t(t.size(1)) * t.element_size();
}

// Reads `batches` random batches of up to `batch` keys (unsorted, with
// duplicates) and compares every row with `ref`. Also submits two
// overlapping batches before waiting on either.
inline void ExpectReadsMatch(RowStore* store, const Tensor& ref, int batches, int batch,
                             uint64_t seed) {
  const int64_t n = ref.size(0);
  const size_t rb = static_cast<size_t>(store->row_bytes());
  ASSERT_EQ(rb, size_t(ref.size(1)) * ref.element_size());
  std::mt19937_64 rng(seed);
  for (int b = 0; b < batches; ++b) {
    const int m = 1 + static_cast<int>(rng() % batch);
    std::vector<std::vector<uint8_t>> bufs(2, std::vector<uint8_t>(size_t(m) * rb, 0xEE));
    std::vector<RowRequest> reqs[2];
    for (int s = 0; s < 2; ++s) {
      for (int i = 0; i < m; ++i) {
        // Mostly random keys; sometimes runs of neighbours (coalescing) and
        // repeats (duplicates within and across submissions).
        int64_t key = static_cast<int64_t>(rng() % n);
        if (i > 0 && rng() % 3 == 0) key = std::min<int64_t>(n - 1, reqs[s][i - 1].key + 1);
        if (i > 0 && rng() % 8 == 0) key = reqs[s][rng() % i].key;
        if (s == 1 && rng() % 2 == 0) key = reqs[0][i].key;
        reqs[s].push_back({key, bufs[s].data() + size_t(i) * rb});
      }
    }
    std::vector<uint8_t> absent(m, 7);
    ASSERT_OK_AND_ASSIGN(IoTicket t0, store->SubmitRead(reqs[0], absent.data()));
    ASSERT_OK_AND_ASSIGN(IoTicket t1, store->SubmitRead(reqs[1], nullptr));
    ASSERT_OK(store->Wait(t1));
    ASSERT_OK(store->Wait(t0));
    for (int s = 0; s < 2; ++s) {
      for (int i = 0; i < m; ++i) {
        ASSERT_EQ(0, std::memcmp(bufs[s].data() + size_t(i) * rb, RowPtr(ref, reqs[s][i].key), rb))
            << store->backend() << ": batch " << b << " submission " << s << " position " << i
            << " key " << reqs[s][i].key;
      }
    }
    for (int i = 0; i < m; ++i) ASSERT_EQ(absent[i], 0) << "position " << i;
  }
}

}  // namespace foresight::storage::testing
