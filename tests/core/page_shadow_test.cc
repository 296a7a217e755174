// A page shadow of a mapped file: loads exactly the pages asked for (the
// resident set grows by those 4 KiB pages, not by the page cache's folios,
// and shrinks back on release), reads the file's bytes there, finds the
// file behind a mapping, and in guard mode crashes on a read of a page it
// did not load.
#include "foresight/core/page_shadow.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "foresight/core/process_memory.h"
#include "foresight/core/thread_pool.h"
#include "testing/testing.h"

namespace foresight {
namespace {

constexpr int64_t kWords = int64_t{8} << 20;  // 64 MiB of i64: word i holds i * 3 + 1

class PageShadowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("words.bin");
    FILE* f = std::fopen(path_.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::vector<int64_t> chunk(1 << 16);
    for (int64_t i = 0; i < kWords; i += static_cast<int64_t>(chunk.size())) {
      for (size_t k = 0; k < chunk.size(); ++k) chunk[k] = (i + static_cast<int64_t>(k)) * 3 + 1;
      ASSERT_EQ(std::fwrite(chunk.data(), 8, chunk.size(), f), chunk.size());
    }
    ASSERT_EQ(std::fclose(f), 0);
    const int fd = ::open(path_.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    void* p = ::mmap(nullptr, kWords * 8, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    ASSERT_NE(p, MAP_FAILED);
    std::shared_ptr<void> owner(p, [](void* b) { ::munmap(b, kWords * 8); });
    // The array starts 24 bytes into the file, as a .npy's data would
    // start after its header: the shadow must keep the offset.
    array_ = Tensor::FromBlob(static_cast<char*>(p) + 24, {kWords - 3}, DType::kI64, Device::Cpu(), owner);
  }
  // Value of array_[i] in the file.
  static int64_t Expected(int64_t i) { return (i + 3) * 3 + 1; }

  testing::TempDir dir_;
  std::string path_;
  Tensor array_;
};

TEST_F(PageShadowTest, FindsTheFileBehindAMapping) {
  ASSERT_OK_AND_ASSIGN(MappedFile f, FindMappedFile(array_.raw_data(), array_.nbytes(), "words"));
  EXPECT_EQ(f.path, path_);
  EXPECT_EQ(f.offset, 24);
  std::vector<int64_t> heap(16);
  testing::ExpectErrorContains(FindMappedFile(heap.data(), 128, "heap words").status(), "FindMappedFile",
                               {"heap words", "not one read-only shared mapping"});
}

TEST_F(PageShadowTest, LoadsTheFileBytesOfTheWantedPagesOnly) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<PageShadow> s, PageShadow::Create(array_, "words", /*guard=*/false));
  const int64_t* w = s->tensor().data<int64_t>();
  EXPECT_EQ(s->tensor().numel(), array_.numel());
  s->Want(8 * 1000, 8 * 1001);           // one page
  s->Want(8 * 1000, 8 * 1001);           // again: queued once
  s->Want(8 * 100000, 8 * 100000 + 9000);  // three pages (crosses two page bounds)
  ThreadPool pool(3);
  ASSERT_OK(s->Load(CpuContext(0, &pool)));
  EXPECT_EQ(s->loaded_pages(), 4);
  EXPECT_EQ(w[1000], Expected(1000));
  EXPECT_EQ(w[100000], Expected(100000));
  EXPECT_EQ(w[100000 + 1124], Expected(100000 + 1124));
  EXPECT_EQ(w[5000000], 0) << "a page not loaded reads as zeros without the guard";
  s->Release();
  EXPECT_EQ(s->loaded_pages(), 0);
  EXPECT_EQ(w[1000], 0) << "released pages are freed";
  EXPECT_EQ(s->peak_pages(), 4);
}

// Resident pages of [p, p + bytes) as mincore(2) sees them: exact for the
// shadow's own anonymous pages, whatever else the process allocates.
int64_t ResidentPages(const void* p, int64_t bytes) {
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) / page * page;
  const uintptr_t last = reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(bytes);
  std::vector<unsigned char> vec((last - first + page - 1) / page);
  if (::mincore(reinterpret_cast<void*>(first), last - first, vec.data()) != 0) return -1;
  int64_t n = 0;
  for (unsigned char v : vec) n += v & 1;
  return n;
}

// The point of the shadow: on a kernel whose page cache holds large folios,
// touching one byte per MiB of a mapped file maps up to a whole folio per
// touch; the shadow's resident set grows by exactly one page per load.
// The shadow's own pages are counted exactly (mincore); the process's
// resident set is checked only against a folio-sized blowup, since other
// heap of a -j2 run moves it by a few pages (CI once saw +2 over a bound
// of 16). A sanitizer's shadow memory grows with every page the loads
// write, so .ci/sanitize leaves this test out of its runs.
TEST_F(PageShadowTest, ResidentSetGrowsByTheLoadedPagesOnly) {
  {
    // Bring the file into the page cache (so folios exist to be mapped).
    std::vector<char> buf(1 << 20);
    FILE* f = std::fopen(path_.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    while (std::fread(buf.data(), 1, buf.size(), f) > 0) {
    }
    std::fclose(f);
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<PageShadow> s, PageShadow::Create(array_, "words", /*guard=*/false));
  constexpr int64_t kTouches = 64;  // one byte per MiB
  const int64_t page = s->page_size();
  const void* shadow = s->tensor().raw_data();
  const int64_t shadow_bytes = s->tensor().nbytes();
  ASSERT_EQ(ResidentPages(shadow, shadow_bytes), 0) << "a new shadow holds no pages";
  // One load and release first: the pool's threads get their stacks and
  // heaps now, not inside the measurement (that was +84 KiB on a run).
  s->Want(0, 1);
  ASSERT_OK(s->Load(CpuContext(0)));
  EXPECT_EQ(ResidentPages(shadow, shadow_bytes), 1);
  s->Release();
  EXPECT_EQ(ResidentPages(shadow, shadow_bytes), 0);
  const int64_t before = ProcStatusBytes("RssAnon") + ProcStatusBytes("RssFile");
  ASSERT_GT(before, 0) << "/proc/self/status has no RssAnon/RssFile";
  for (int64_t k = 0; k < kTouches; ++k) s->Want(k * (1 << 20), k * (1 << 20) + 1);
  ASSERT_OK(s->Load(CpuContext(0)));
  const int64_t loaded = ProcStatusBytes("RssAnon") + ProcStatusBytes("RssFile");
  EXPECT_EQ(s->loaded_pages(), kTouches);
  EXPECT_EQ(ResidentPages(shadow, shadow_bytes), kTouches) << "exactly the loaded pages, no folios";
  // The process as a whole: nowhere near a folio a touch (16 KiB or more
  // each on such kernels; the file mapping below shows the contrast).
  EXPECT_LE(loaded - before, 2 * kTouches * page);
  s->Release();
  EXPECT_EQ(ResidentPages(shadow, shadow_bytes), 0) << "Release frees every page";
  // For comparison only (kernel-dependent, not checked): the same touches
  // through the file mapping.
  const int64_t file_before = ProcStatusBytes("RssFile");
  int64_t sum = 0;
  const char* bytes = static_cast<const char*>(array_.raw_data());
  for (int64_t k = 0; k < kTouches; ++k) sum += bytes[k * (1 << 20)];
  std::printf("touching %lld pages: shadow +%lld KiB, file mapping +%lld KiB (sum %lld)\n",
              static_cast<long long>(kTouches), static_cast<long long>((loaded - before) >> 10),
              static_cast<long long>((ProcStatusBytes("RssFile") - file_before) >> 10),
              static_cast<long long>(sum));
}

TEST_F(PageShadowTest, GuardCrashesOnAPageNotLoaded) {
#ifdef GTEST_FLAG_SET
  GTEST_FLAG_SET(death_test_style, "threadsafe");
#else
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
#endif
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<PageShadow> s, PageShadow::Create(array_, "words", /*guard=*/true));
  const volatile int64_t* w = s->tensor().data<int64_t>();
  s->Want(8 * 1000, 8 * 1001);
  ASSERT_OK(s->Load(CpuContext(0)));
  EXPECT_EQ(w[1000], Expected(1000));
  EXPECT_DEATH({ (void)w[5000000]; }, "");
  s->Release();
  EXPECT_DEATH({ (void)w[1000]; }, "") << "a released page is guarded again";
}

TEST_F(PageShadowTest, RefusesMemoryThatIsNotAFileMapping) {
  Tensor heap = Tensor::Zeros({1024}, DType::kI64);
  testing::ExpectErrorContains(PageShadow::Create(heap, "heap array", false).status(), "Create",
                               {"heap array", "not one read-only shared mapping"});
}

}  // namespace
}  // namespace foresight
