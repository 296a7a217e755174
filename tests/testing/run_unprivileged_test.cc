// RunUnprivileged: the body runs without root's disregard for file modes,
// and what goes wrong in it is reported in the calling test.
#include <gtest/gtest-spi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "testing/testing.h"

namespace foresight::testing {
namespace {

TEST(RunUnprivileged, BodyRunsWithoutRootInAChild) {
  bool ran = false;
  const pid_t parent = ::getpid();
  const uid_t uid = ::geteuid();
  RunUnprivileged({}, [&] {
    ran = true;  // the child's copy: never seen here
    EXPECT_NE(::getpid(), parent);
    EXPECT_NE(::geteuid(), 0u);
    if (uid != 0) {
      EXPECT_EQ(::geteuid(), uid);  // not root: the uid is kept
    }
  });
  EXPECT_FALSE(ran);
}

TEST(RunUnprivileged, ReportsNonFatalFailureWithItsText) {
  EXPECT_NONFATAL_FAILURE(RunUnprivileged({}, [] { EXPECT_EQ(1, 2) << "first detail"; }), "first detail");
}

TEST(RunUnprivileged, ReportsFatalFailureAsFatal) {
  EXPECT_FATAL_FAILURE(RunUnprivileged({}, [] { FAIL() << "fatal detail"; }), "fatal detail");
}

TEST(RunUnprivileged, ReportsACrashedChild) {
  EXPECT_NONFATAL_FAILURE(RunUnprivileged({}, [] { std::abort(); }), "killed by signal 6");
}

TEST(RunUnprivileged, AccessiblePathsAreWritableAndModesKept) {
  TempDir dir;
  const std::string locked = dir.File("locked");
  WriteFile(locked, "x");
  ASSERT_EQ(0, ::chmod(locked.c_str(), 0));
  RunUnprivileged({dir.path()}, [&] {
    std::ofstream out(dir.File("new"));
    out << "written";
    EXPECT_TRUE(out.good()) << "cannot write in " << dir.path();
    EXPECT_NE(::access(locked.c_str(), R_OK), 0) << "a mode-0 file stayed readable";
  });
  EXPECT_EQ(ReadFile(dir.File("new")), "written");
  struct stat st;
  ASSERT_EQ(0, ::stat(dir.path().c_str(), &st));
  EXPECT_EQ(st.st_uid, ::geteuid()) << "the owner was not restored";
}

}  // namespace
}  // namespace foresight::testing
