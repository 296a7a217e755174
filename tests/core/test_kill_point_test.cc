// The shared test kill points (foresight/core/test_kill_point.h): a forked
// child armed with FORESIGHT_TEST_KILL_AT passes points and reports each on
// a pipe; it must die of SIGKILL exactly at the armed pass, and live on
// when nothing it passes is armed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "foresight/core/test_kill_point.h"

namespace foresight {
namespace {

struct Outcome {
  std::string passed;  // the points the child got past, one letter each
  bool killed = false;
};

// Runs the points a, b, a, b, c in a child whose environment arms `spec`.
Outcome RunChild(const char* spec) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::setenv("FORESIGHT_TEST_KILL_AT", spec, 1);
    for (const char* p : {"a", "b", "a", "b", "c"}) {
      TestKillPoint(p);
      [[maybe_unused]] const ssize_t w = ::write(fds[1], p, 1);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  Outcome out;
  char c;
  while (::read(fds[0], &c, 1) == 1) out.passed += c;
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  out.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  return out;
}

TEST(TestKillPointTest, KillsAtTheArmedPass) {
  const Outcome by_name = RunChild("b");
  EXPECT_TRUE(by_name.killed);
  EXPECT_EQ(by_name.passed, "a");
  const Outcome second = RunChild("b:2");
  EXPECT_TRUE(second.killed);
  EXPECT_EQ(second.passed, "aba");
  const Outcome any = RunChild("3");
  EXPECT_TRUE(any.killed);
  EXPECT_EQ(any.passed, "ab");
}

TEST(TestKillPointTest, PointsNotArmedLetTheProcessLive) {
  for (const char* spec : {"", "d", "c:2", "0", "b:x"}) {
    const Outcome o = RunChild(spec);
    EXPECT_FALSE(o.killed) << spec;
    EXPECT_EQ(o.passed, "ababc") << spec;
  }
}

}  // namespace
}  // namespace foresight
