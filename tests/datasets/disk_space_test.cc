// The up-front disk check of edge-list preprocessing: edge counts estimated
// from a file's first bytes (plain, gzip, binary pairs; xz refused), the
// needs of folders on one filesystem summed, and the refusal naming the
// folder, the bytes needed and the bytes free.
#include "disk_space.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "compress_util.h"
#include "testing/testing.h"

namespace foresight::datasets::internal {
namespace {

// `lines` random "u v" lines with ids below 10^7.
std::string EdgeText(int64_t lines) {
  std::mt19937_64 rng(1);
  std::string s;
  for (int64_t i = 0; i < lines; ++i) {
    s += std::to_string(rng() % 10000000) + " " + std::to_string(rng() % 10000000) + "\n";
  }
  return s;
}

TEST(DiskSpaceTest, EstimatesEdgesOfPlainGzipAndBinaryFiles) {
  testing::TempDir dir;
  // 600k lines, ~9 MB plain: the estimate reads only the first 4 MiB.
  const std::string text = EdgeText(600000);
  testing::WriteFile(dir.File("e.txt"), text);
  testing::WriteFile(dir.File("e.txt.gz"), testutil::Gzip(text));
  ASSERT_OK_AND_ASSIGN(int64_t plain, EstimateEdgeCount(dir.File("e.txt"), 0));
  ASSERT_OK_AND_ASSIGN(int64_t gz, EstimateEdgeCount(dir.File("e.txt.gz"), 0));
  EXPECT_NEAR(static_cast<double>(plain), 600000.0, 600000 * 0.05);
  EXPECT_NEAR(static_cast<double>(gz), 600000.0, 600000 * 0.1);
  // A small gzip file is read whole: exact.
  testing::WriteFile(dir.File("small.gz"), testutil::Gzip(EdgeText(1000)));
  ASSERT_OK_AND_ASSIGN(int64_t small, EstimateEdgeCount(dir.File("small.gz"), 0));
  EXPECT_EQ(small, 1000);
  testing::WriteFile(dir.File("e.bin"), std::string(8 * 1234, '\0'));
  ASSERT_OK_AND_ASSIGN(int64_t pairs, EstimateEdgeCount(dir.File("e.bin"), 8));
  EXPECT_EQ(pairs, 1234);
  testing::WriteFile(dir.File("e.xz"), testutil::Xz(text.substr(0, 1000)));
  testing::ExpectErrorContains(EstimateEdgeCount(dir.File("e.xz"), 0).status(), "xz", {"e.xz", "xz"});
  testing::ExpectErrorContains(EstimateEdgeCount(dir.File("absent"), 0).status(), "absent", {"absent"});
}

TEST(DiskSpaceTest, RefusesNamingTheFolderTheBytesNeededAndFree) {
  testing::TempDir a;
  const auto ten_gb = [](const std::string&) -> StatusOr<int64_t> { return int64_t{10'000'000'000}; };
  EXPECT_OK(CheckDiskSpace({{a.path(), 6'000'000'000, "the dataset"}}, ten_gb));
  // Two folders on one filesystem share it: 6 + 6 GB do not fit in 10.
  testing::TempDir b;
  testing::ExpectErrorContains(
      CheckDiskSpace({{a.path(), 6'000'000'000, "the dataset"}, {b.path(), 6'000'000'000, "spilled edge runs"}},
                     ten_gb),
      "two folders", {"needs about 12.0 GB", "the dataset 6.0 GB in " + a.path(),
                      "spilled edge runs 6.0 GB in " + b.path(), "10.0 GB free", "--temp-dir"});
  testing::ExpectErrorContains(CheckDiskSpace({{a.path() + "/absent", 1, "the dataset"}}, ten_gb), "absent",
                               {"absent", "the dataset"});
}

}  // namespace
}  // namespace foresight::datasets::internal
