// MappedRssBytes finds a directory's mapped, resident pages however the
// directory is named: absolute, relative to the working directory, or
// through a symlink. (A dataset given as a relative path once counted none
// of its 763 MiB of mapped indptr, so a 4 GiB plan took them for the
// process's own baseline and gave the cache that much less.) MinorFaults
// counts the process's first touches of fresh pages (the trainer's
// epoch_minor_faults).
#include "foresight/core/process_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "testing/testing.h"

namespace foresight {
namespace {

TEST(MappedRssBytes, FindsTheDirectoryByAnyName) {
  testing::TempDir dir;
  const std::string data = dir.File("data");
  ASSERT_EQ(::mkdir(data.c_str(), 0755), 0);
  const std::string file = data + "/words.bin";
  constexpr size_t kBytes = 4 << 20;
  {
    FILE* f = std::fopen(file.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const std::vector<char> zeros(kBytes, 1);
    ASSERT_EQ(std::fwrite(zeros.data(), 1, kBytes, f), kBytes);
    ASSERT_EQ(std::fclose(f), 0);
  }
  const int fd = ::open(file.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* p = ::mmap(nullptr, kBytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(p, MAP_FAILED);
  long sum = 0;
  for (size_t i = 0; i < kBytes; i += 4096) sum += static_cast<const volatile char*>(p)[i];
  ASSERT_EQ(sum, static_cast<long>(kBytes / 4096));

  const int64_t absolute = MappedRssBytes(data);
  EXPECT_GE(absolute, static_cast<int64_t>(kBytes));
  ASSERT_EQ(::symlink(data.c_str(), dir.File("link").c_str()), 0);
  EXPECT_EQ(MappedRssBytes(dir.File("link")), absolute);
  char cwd[PATH_MAX];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(::chdir(dir.path().c_str()), 0);
  const int64_t relative = MappedRssBytes("data");
  const int64_t trailing = MappedRssBytes("./data/");
  ASSERT_EQ(::chdir(cwd), 0);
  EXPECT_EQ(relative, absolute);
  EXPECT_EQ(trailing, absolute);
  EXPECT_EQ(MappedRssBytes(dir.File("elsewhere")), 0);
  ::munmap(p, kBytes);
}

// Every page of a fresh anonymous mapping faults once on its first write
// (no huge pages: one fault a page); other threads can only add to the
// process's count.
TEST(MinorFaults, CountsEachFirstTouchOfAFreshPage) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  constexpr size_t kPages = 256;
  void* p = ::mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  (void)::madvise(p, kPages * page, MADV_NOHUGEPAGE);
  const int64_t before = MinorFaults();
  volatile char* c = static_cast<char*>(p);
  for (size_t i = 0; i < kPages; ++i) c[i * page] = 1;
  const int64_t after = MinorFaults();
  EXPECT_GE(after - before, static_cast<int64_t>(kPages));
  // Touched again: no new faults of these pages (a loose bound: other
  // threads of the test runner could fault meanwhile).
  for (size_t i = 0; i < kPages; ++i) c[i * page] = 2;
  EXPECT_LT(MinorFaults() - after, static_cast<int64_t>(kPages) / 2);
  ::munmap(p, kPages * page);
}

}  // namespace
}  // namespace foresight
