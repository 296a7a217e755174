// What a killed DLRM or link-prediction run leaves in its checkpoint
// directory goes at the next start: temporaries, and sub-directories of
// the run's own prefix that the pointer does not name. Other files stay,
// and an unreadable pointer keeps everything for a person to look at.
#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <string>

#include "checkpoint_io.h"
#include "dlrm_checkpoint.h"
#include "link_checkpoint.h"
#include "testing/testing.h"

namespace foresight::trainer::internal {
namespace {

std::set<std::string> Entries(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

void MakeDirs(const testing::TempDir& dir, std::initializer_list<const char*> names) {
  for (const char* n : names) ASSERT_EQ(::mkdir(dir.File(n).c_str(), 0755), 0) << n;
}

TEST(CheckpointLeftovers, WithoutAPointerEverySubDirectoryOfTheRunsPrefixGoes) {
  testing::TempDir dir;
  MakeDirs(dir, {"dlrm-epoch-000001", "dlrm-epoch-000002.tmp", "link-epoch-000001"});
  testing::WriteFile(dir.File("dlrm_checkpoint.json.tmp"), "{");
  testing::WriteFile(dir.File("notes.txt"), "mine");
  ASSERT_OK(RemoveDlrmCheckpointLeftovers(dir.path()));
  EXPECT_EQ(Entries(dir.path()), (std::set<std::string>{"link-epoch-000001", "notes.txt"}));
  ASSERT_OK(RemoveLinkCheckpointLeftovers(dir.path()));
  EXPECT_EQ(Entries(dir.path()), (std::set<std::string>{"notes.txt"}));
}

TEST(CheckpointLeftovers, AnUnreadablePointerKeepsEverything) {
  testing::TempDir dir;
  MakeDirs(dir, {"dlrm-epoch-000001", "link-epoch-000003"});
  testing::WriteFile(dir.File("x.tmp"), "");
  testing::WriteFile(dir.File(kDlrmCheckpointFile), "{ not json");
  testing::WriteFile(dir.File(kLinkCheckpointFile), "{ not json");
  const std::set<std::string> before = Entries(dir.path());
  ASSERT_OK(RemoveDlrmCheckpointLeftovers(dir.path()));
  ASSERT_OK(RemoveLinkCheckpointLeftovers(dir.path()));
  EXPECT_EQ(Entries(dir.path()), before);
}

TEST(CheckpointLeftovers, TheSubDirectoryThePointerNamesStays) {
  testing::TempDir dir;
  MakeDirs(dir, {"p-1", "p-2", "q-1"});
  ASSERT_OK(RemoveLeftoversBesides(dir.path(), "p-", Status::OK(), "p-2"));
  EXPECT_EQ(Entries(dir.path()), (std::set<std::string>{"p-2", "q-1"}));
  // A pointer that could not be read for another reason than its absence.
  ASSERT_OK(RemoveLeftoversBesides(dir.path(), "q-", DataLoss("bad pointer"), ""));
  EXPECT_EQ(Entries(dir.path()), (std::set<std::string>{"p-2", "q-1"}));
}

}  // namespace
}  // namespace foresight::trainer::internal
