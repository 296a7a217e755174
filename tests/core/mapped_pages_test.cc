#include "foresight/core/mapped_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "testing/testing.h"

namespace foresight {
namespace {

int64_t ThreadMinorFaults() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

// Reads one byte of every page; returns the sum (kept, so it is not elided).
int64_t ReadEveryPage(const uint8_t* p, size_t bytes, size_t page) {
  int64_t sum = 0;
  for (size_t at = 0; at < bytes; at += page) sum += reinterpret_cast<const volatile uint8_t*>(p)[at];
  return sum;
}

// After TouchPages every page of a file mapping is mapped: reading them all
// again takes no page fault, where a fresh mapping of the same file does.
TEST(MappedPages, TouchPagesMapsEveryPageOfAFileMapping) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t pages = 64;
  testing::TempDir dir;
  const std::string path = dir.File("rows.bin");
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> bytes(pages * page);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i / page + 1);
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  auto map = [&] { return static_cast<uint8_t*>(mmap(nullptr, bytes.size(), PROT_READ, MAP_SHARED, fd, 0)); };
  uint8_t* touched = map();
  uint8_t* fresh = map();
  ASSERT_NE(touched, MAP_FAILED);
  ASSERT_NE(fresh, MAP_FAILED);

  // A range that starts and ends inside a page still covers all 64.
  EXPECT_EQ(TouchPages(touched + 100, bytes.size() - 200), static_cast<int64_t>(pages));
  int64_t before = ThreadMinorFaults();
  const int64_t sum_touched = ReadEveryPage(touched, bytes.size(), page);
  EXPECT_EQ(ThreadMinorFaults() - before, 0);

  before = ThreadMinorFaults();
  const int64_t sum_fresh = ReadEveryPage(fresh, bytes.size(), page);
  EXPECT_GT(ThreadMinorFaults() - before, 0) << "a fresh mapping should fault on first read";
  EXPECT_EQ(sum_touched, sum_fresh);
  EXPECT_EQ(sum_touched, static_cast<int64_t>(pages * (pages + 1) / 2));

  EXPECT_EQ(TouchPages(touched, 0), 0);
  EXPECT_EQ(TouchPages(Tensor()), 0);
  munmap(touched, bytes.size());
  munmap(fresh, bytes.size());
  close(fd);
}

}  // namespace
}  // namespace foresight
