// DatasetWriter's staging directories: never a dataset (Dataset::Open
// refuses one even when complete), stale ones of dead writers removed by the
// next writer of the same output and live ones kept (whatever their pid
// says), parents a failed write made removed again, and the replacement of
// an old dataset with and without renameat2(RENAME_EXCHANGE).
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <signal.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "foresight/storage/dataset.h"
#include "testing/testing.h"

namespace foresight::storage {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;
using testing::TensorOf;

constexpr char kMarker[] = ".foresight-staging.json";

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Fills writer `w` with a valid 3-node dataset (not committed).
void Fill(DatasetWriter* w, const std::string& name = "three") {
  DatasetManifest& m = w->manifest();
  m.name = name;
  m.num_nodes = 3;
  m.num_edges = 2;
  m.feature_dim = 1;
  m.num_classes = 2;
  ASSERT_OK(w->WriteArray(kIndptrFile, TensorOf<int64_t>({0, 1, 2, 2})));
  ASSERT_OK(w->WriteArray(kIndicesFile, TensorOf<int32_t>({1, 0})));
  Tensor f = Tensor::Zeros({3, 1}, DType::kF32);
  ASSERT_OK(w->WriteArray(kFeaturesFile, f));
  ASSERT_OK(w->WriteArray(kLabelsFile, TensorOf<int32_t>({0, 1, -1})));
  ASSERT_OK(w->WriteArray(kTrainIdsFile, TensorOf<int64_t>({0})));
  ASSERT_OK(w->WriteArray(kValIdsFile, TensorOf<int64_t>({1})));
  ASSERT_OK(w->WriteArray(kTestIdsFile, TensorOf<int64_t>({})));
}

void WriteDataset(const std::string& out, bool overwrite, const std::string& name = "three") {
  ASSERT_OK_AND_ASSIGN(auto w, DatasetWriter::Create(out, overwrite));
  Fill(w.get(), name);
  ASSERT_OK(w->Commit());
}

std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// A pid that no process has: a child that has exited and been reaped.
pid_t DeadPid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status;
  ::waitpid(pid, &status, 0);
  return pid;
}

// A staging-like directory `name` in `parent`, with a marker when `marker`
// is not null.
std::string FakeStaging(const std::string& parent, const std::string& name, const json* marker) {
  const std::string dir = parent + "/" + name;
  fs::create_directory(dir);
  testing::WriteFile(dir + "/indptr.npy", "half a dataset");
  if (marker != nullptr) testing::WriteFile(dir + "/" + kMarker, marker->dump());
  return dir;
}

TEST(DatasetStagingTest, AStagingDirIsNeverADatasetEvenWhenComplete) {
  TempDir tmp;
  const std::string out = tmp.File("out");
  WriteDataset(tmp.File("done"), false);
  ASSERT_OK_AND_ASSIGN(auto w, DatasetWriter::Create(out, false));
  const std::string staging = w->staging_dir();
  // Every file of a complete dataset, manifest included, in staging.
  for (const std::string& name : Names(tmp.File("done"))) {
    fs::copy_file(tmp.File("done") + "/" + name, staging + "/" + name);
  }
  ASSERT_TRUE(fs::exists(staging + "/" + kMarker));
  const std::string why = " is the staging directory of an unfinished write of dataset " + out;
  EXPECT_ERROR_CONTAINS(Dataset::Open(staging), staging + why, "process " + std::to_string(::getpid()),
                        "Run the command that writes " + out + " again");
  EXPECT_EQ(Dataset::Open(staging).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_ERROR_CONTAINS(CheckNotStagingDir(staging), why);
  // Through a symlink too.
  fs::create_directory_symlink(staging, tmp.File("link"));
  EXPECT_ERROR_CONTAINS(Dataset::Open(tmp.File("link")), why);
  EXPECT_OK(CheckNotStagingDir(tmp.File("done")));
  // Tools cannot overwrite the marker through the writer.
  EXPECT_ERROR_CONTAINS(w->WriteArray(kMarker, TensorOf<int64_t>({0})), "plain name");
}

TEST(DatasetStagingTest, CommitMakesTheDatasetOpenAndLeavesNoMarker) {
  TempDir tmp;
  const std::string out = tmp.File("out");
  WriteDataset(out, false);
  EXPECT_EQ(Names(tmp.path()), std::vector<std::string>{"out"});
  EXPECT_FALSE(fs::exists(out + "/" + kMarker));
  EXPECT_OK(Dataset::Open(out).status());
  // A marker left by a kill between the rename and its removal names the
  // staging dir, not this one: ignored.
  const json left = {{"staged_as", "out.tmp-1-0123abcd"}, {"output", out}, {"pid", 1}, {"host", HostName()}};
  testing::WriteFile(out + "/" + kMarker, left.dump());
  EXPECT_OK(Dataset::Open(out).status());
  // Replacing it leaves no marker either.
  WriteDataset(out, true, "again");
  EXPECT_FALSE(fs::exists(out + "/" + kMarker));
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out));
  EXPECT_EQ(ds->manifest().name, "again");
}

TEST(DatasetStagingTest, TheNextWriterRemovesStaleStagingDirsAndKeepsLiveOnes) {
  TempDir tmp;
  const std::string out = tmp.File("out");
  const std::string me = std::to_string(::getpid());
  const std::string dead = std::to_string(DeadPid());
  // A writer killed right after its mkdir: no marker, its pid gone.
  FakeStaging(tmp.path(), "out.tmp-" + dead + "-0123abcd", nullptr);
  // No marker, and its pid (ours) runs: maybe between mkdir and marker.
  FakeStaging(tmp.path(), "out.tmp-" + me + "-0123abce", nullptr);
  // A complete marker nobody locks: its writer died, even though a process
  // with the pid in its name (us: pid reuse) runs.
  const json unlocked = {{"staged_as", "out.tmp-" + me + "-0123abcf"}, {"output", out}, {"pid", ::getpid()},
                         {"host", HostName()}};
  FakeStaging(tmp.path(), "out.tmp-" + me + "-0123abcf", &unlocked);
  // The same, written on another host: locks may not reach across hosts.
  json remote = unlocked;
  remote["host"] = HostName() + "-elsewhere";
  remote["staged_as"] = "out.tmp-" + dead + "-01234567";
  FakeStaging(tmp.path(), "out.tmp-" + dead + "-01234567", &remote);
  // Not staging names, or not directories: never touched.
  FakeStaging(tmp.path(), "out.tmp-" + dead + "-0123abc", nullptr);   // 7 hex digits
  FakeStaging(tmp.path(), "out.tmp-x" + dead + "-0123abcd", nullptr);
  FakeStaging(tmp.path(), "other.tmp-" + dead + "-0123abcd", nullptr);
  testing::WriteFile(tmp.File("out.tmp-" + dead + "-aaaaaaaa"), "a file");
  FakeStaging(tmp.path(), "target", nullptr);
  fs::create_directory_symlink(tmp.File("target"), tmp.File("out.tmp-" + dead + "-bbbbbbbb"));
  // A live writer of the same output.
  ASSERT_OK_AND_ASSIGN(auto live, DatasetWriter::Create(out, false));
  const std::string live_name = fs::path(live->staging_dir()).filename().string();

  ASSERT_OK_AND_ASSIGN(auto w, DatasetWriter::Create(out, false));
  const std::string mine = fs::path(w->staging_dir()).filename().string();
  std::vector<std::string> expected = {"out.tmp-" + me + "-0123abce",
                                       "out.tmp-" + dead + "-01234567",
                                       "out.tmp-" + dead + "-0123abc",
                                       "out.tmp-x" + dead + "-0123abcd",
                                       "other.tmp-" + dead + "-0123abcd",
                                       "out.tmp-" + dead + "-aaaaaaaa",
                                       "target",
                                       "out.tmp-" + dead + "-bbbbbbbb",
                                       live_name,
                                       mine};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Names(tmp.path()), expected);
  EXPECT_TRUE(fs::exists(tmp.File("target") + "/indptr.npy"));
  // A writer destroyed without a commit removes its own staging dir.
  live.reset();
  EXPECT_FALSE(fs::exists(tmp.File(live_name)));
  Fill(w.get());
  ASSERT_OK(w->Commit());
  EXPECT_OK(Dataset::Open(out).status());
}

TEST(DatasetStagingTest, OldDatasetsThatEarlierReplacesLeftAreRemovedOnceTheOutputExists) {
  TempDir tmp;
  const std::string out = tmp.File("out");
  const std::string me = std::to_string(::getpid());
  const std::string dead = std::to_string(DeadPid());
  // An older replace, killed between its two renames: out is missing and
  // the moved-aside dataset is the only copy, so it stays.
  WriteDataset(tmp.File("out.old-" + dead + "-0123abcd"), false);
  ASSERT_OK_AND_ASSIGN(auto first, DatasetWriter::Create(out, false));
  first.reset();
  EXPECT_TRUE(fs::exists(tmp.File("out.old-" + dead + "-0123abcd") + "/manifest.json"));
  // Killed after the swap: out is a dataset again and the old one garbage,
  // unless its replacing process (us) still runs.
  WriteDataset(out, false);
  FakeStaging(tmp.path(), "out.old-" + me + "-0123abce", nullptr);
  FakeStaging(tmp.path(), "out.old-" + dead + "-0123abc", nullptr);  // not the name pattern
  testing::WriteFile(tmp.File("out.old-" + dead + "-aaaaaaaa"), "a file");
  WriteDataset(out, true, "again");
  std::vector<std::string> expected = {"out", "out.old-" + dead + "-0123abc", "out.old-" + dead + "-aaaaaaaa",
                                       "out.old-" + me + "-0123abce"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Names(tmp.path()), expected);
}

TEST(DatasetStagingTest, AFailedWriteRemovesTheParentDirsItMade) {
  TempDir tmp;
  {
    ASSERT_OK_AND_ASSIGN(auto w, DatasetWriter::Create(tmp.File("a/b/c/out"), false));
    EXPECT_TRUE(fs::is_directory(tmp.File("a/b/c")));
    Fill(w.get());
  }  // destroyed without Commit, as on any error
  EXPECT_TRUE(fs::is_empty(tmp.path()));
  // Only what it made: an existing parent stays, and so does one that
  // someone else filled meanwhile.
  fs::create_directory(tmp.File("a"));
  {
    ASSERT_OK_AND_ASSIGN(auto w, DatasetWriter::Create(tmp.File("a/b/c/out"), false));
    testing::WriteFile(tmp.File("a/b/note"), "mine");
  }
  EXPECT_EQ(Names(tmp.File("a")), std::vector<std::string>{"b"});
  EXPECT_EQ(Names(tmp.File("a/b")), std::vector<std::string>{"note"});
  // A committed dataset keeps its parents.
  WriteDataset(tmp.File("x/y/out"), false);
  EXPECT_OK(Dataset::Open(tmp.File("x/y/out")).status());
}

TEST(DatasetStagingTest, ReplacesWithAndWithoutRenameExchange) {
  TempDir tmp;
  const std::string out = tmp.File("out");
  WriteDataset(out, false, "first");
  WriteDataset(out, true, "second");
  ASSERT_EQ(::setenv("FORESIGHT_TEST_NO_RENAME_EXCHANGE", "1", 1), 0);
  WriteDataset(out, true, "third");
  ::unsetenv("FORESIGHT_TEST_NO_RENAME_EXCHANGE");
  EXPECT_EQ(Names(tmp.path()), std::vector<std::string>{"out"});
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out));
  EXPECT_EQ(ds->manifest().name, "third");
  EXPECT_FALSE(fs::exists(out + "/" + kMarker));
}

TEST(DatasetStagingTest, TwoRunsReplacingOneOutputAtOnce) {
  TempDir tmp;
  const std::string out = tmp.File("out");
  WriteDataset(out, false, "first");
  ASSERT_OK_AND_ASSIGN(auto w, DatasetWriter::Create(out, true));
  Fill(w.get(), "second");
  // Another process is in the middle of replacing `out`: it holds the lock
  // of the marker it put there.
  testing::WriteFile(out + "/" + kMarker, "");
  const int fd = ::open((out + "/" + kMarker).c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  const pid_t child = ::fork();
  if (child == 0) {
    // A separate open file description, in another process: flock conflicts.
    const int cfd = ::open((out + "/" + kMarker).c_str(), O_RDWR);
    ::_exit(cfd >= 0 && ::flock(cfd, LOCK_EX) == 0 && ::pause() == 0 ? 0 : 1);
  }
  // Wait until the child holds the lock.
  int status;
  while (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
    ASSERT_EQ(::waitpid(child, &status, WNOHANG), 0) << "the child could not lock the marker";
    ::usleep(1000);
  }
  EXPECT_ERROR_CONTAINS(w->Commit(), out + " is being replaced by another foresight process");
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  ::close(fd);
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out));
  EXPECT_EQ(ds->manifest().name, "first");
}

}  // namespace
}  // namespace foresight::storage
