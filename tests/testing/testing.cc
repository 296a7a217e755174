#include "testing/testing.h"

#include <gtest/gtest-spi.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace foresight::testing {

void ExpectErrorContains(const Status& s, const char* expr, std::initializer_list<std::string> parts) {
  EXPECT_FALSE(s.ok()) << expr << " succeeded but was expected to fail";
  for (const std::string& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos)
        << expr << ": message \"" << s.ToString() << "\" does not contain \"" << p << "\"";
  }
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/foresight-test-XXXXXX";
  char* p = mkdtemp(tmpl.data());
  if (p == nullptr) {
    ADD_FAILURE() << "mkdtemp failed for " << tmpl;
  }
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream f(path, std::ios::binary);
  f << contents;
  ASSERT_TRUE(f.good()) << "cannot write " << path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

namespace {

constexpr uid_t kNobody = 65534;

// One gtest result as it crosses the pipe: type, line, file, message.
void WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // the parent is gone; nothing left to report to
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void WriteString(int fd, const std::string& s) {
  const uint32_t n = static_cast<uint32_t>(s.size());
  WriteAll(fd, &n, sizeof(n));
  WriteAll(fd, s.data(), n);
}

void WriteRecord(int fd, ::testing::TestPartResult::Type type, int line, const std::string& file,
                 const std::string& message) {
  const int32_t head[2] = {static_cast<int32_t>(type), line};
  WriteAll(fd, head, sizeof(head));
  WriteString(fd, file);
  WriteString(fd, message);
}

struct Record {
  ::testing::TestPartResult::Type type;
  int line;
  std::string file, message;
};

// Parses what the child wrote; a torn tail (child killed mid-write) is dropped.
std::vector<Record> ParseRecords(const std::string& buf) {
  std::vector<Record> out;
  size_t pos = 0;
  auto take = [&](void* dst, size_t n) {
    if (buf.size() - pos < n) return false;
    std::memcpy(dst, buf.data() + pos, n);
    pos += n;
    return true;
  };
  auto take_string = [&](std::string* s) {
    uint32_t n;
    if (!take(&n, sizeof(n)) || buf.size() - pos < n) return false;
    s->assign(buf.data() + pos, n);
    pos += n;
    return true;
  };
  while (pos < buf.size()) {
    int32_t head[2];
    Record r;
    if (!take(head, sizeof(head)) || !take_string(&r.file) || !take_string(&r.message)) break;
    r.type = static_cast<::testing::TestPartResult::Type>(head[0]);
    r.line = head[1];
    out.push_back(std::move(r));
  }
  return out;
}

// Sets the owner of `path` and everything under it; returns the previous
// owners so they can be restored.
std::vector<std::pair<std::string, struct stat>> ChownTree(const std::string& path, uid_t uid, gid_t gid) {
  std::vector<std::pair<std::string, struct stat>> before;
  auto one = [&](const std::string& p) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      ADD_FAILURE() << "RunUnprivileged: cannot stat " << p << ": " << std::strerror(errno);
      return;
    }
    before.emplace_back(p, st);
    if (::lchown(p.c_str(), uid, gid) != 0) {
      ADD_FAILURE() << "RunUnprivileged: cannot chown " << p << ": " << std::strerror(errno);
    }
  };
  one(path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(path, ec)) one(e.path().string());
  }
  return before;
}

[[noreturn]] void RunChild(int fd, const std::function<void()>& body, bool drop_root) {
  // Supplementary groups first: after setuid we could no longer drop them.
  if (drop_root && (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)) {
    WriteRecord(fd, ::testing::TestPartResult::kFatalFailure, 0, "",
                std::string("RunUnprivileged: cannot drop root privileges to uid 65534: ") + std::strerror(errno));
    ::_exit(0);
  }
  ::testing::TestPartResultArray results;
  {
    // Both: a per-thread reporter inherited from the parent (e.g. an
    // EXPECT_FATAL_FAILURE around this call) would otherwise take this
    // thread's results, and the global one catches threads the body starts.
    using Reporter = ::testing::ScopedFakeTestPartResultReporter;
    Reporter all_threads(Reporter::INTERCEPT_ALL_THREADS, &results);
    Reporter this_thread(Reporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    body();
  }
  for (int i = 0; i < results.size(); ++i) {
    const ::testing::TestPartResult& r = results.GetTestPartResult(i);
    WriteRecord(fd, r.type(), r.line_number(), r.file_name() ? r.file_name() : "", r.message());
  }
  ::close(fd);
  // _exit: no atexit handlers, no gtest teardown, no flushing of stdio
  // buffers inherited from the parent.
  ::_exit(0);
}

}  // namespace

void RunUnprivileged(const std::vector<std::string>& accessible, const std::function<void()>& body) {
  // Not root: the child keeps this uid, which file modes already bind.
  const bool root = ::geteuid() == 0;
  std::vector<std::pair<std::string, struct stat>> owners;
  for (const std::string& p : root ? accessible : std::vector<std::string>()) {
    auto b = ChownTree(p, kNobody, kNobody);
    owners.insert(owners.end(), b.begin(), b.end());
  }
  auto restore = [&] {
    for (const auto& [p, st] : owners) (void)::lchown(p.c_str(), st.st_uid, st.st_gid);
  };
  int fds[2];
  if (::pipe(fds) != 0) {
    restore();
    ADD_FAILURE() << "RunUnprivileged: pipe: " << std::strerror(errno);
    return;
  }
  std::fflush(nullptr);  // so buffered output is not written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    restore();
    ADD_FAILURE() << "RunUnprivileged: fork: " << std::strerror(errno);
    return;
  }
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(fds[1], body, root);
  }
  ::close(fds[1]);
  std::string buf;
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  restore();

  std::string skip;
  for (const Record& r : ParseRecords(buf)) {
    if (r.type == ::testing::TestPartResult::kSkip) {
      skip = r.message;
      continue;
    }
    // Same file, line and fatality as in the child.
    GTEST_MESSAGE_AT_(r.file.empty() ? nullptr : r.file.c_str(), r.line,
                      ("[as uid 65534] " + r.message).c_str(), r.type);
  }
  if (WIFSIGNALED(wstatus)) {
    ADD_FAILURE() << "RunUnprivileged: the child running the test body was killed by signal "
                  << WTERMSIG(wstatus) << " (" << strsignal(WTERMSIG(wstatus)) << ")";
  } else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    ADD_FAILURE() << "RunUnprivileged: the child running the test body exited with status "
                  << WEXITSTATUS(wstatus);
  }
  if (!skip.empty()) GTEST_SKIP() << skip;
}

std::string SourceDir() { return FORESIGHT_SOURCE_DIR; }
std::string BinaryDir() { return FORESIGHT_BINARY_DIR; }

std::string SharedDataset(const std::string& name) {
  const std::string p = SourceDir() + "/../shared/datasets/" + name;
  return std::filesystem::exists(p) ? p : std::string();
}

std::vector<int64_t> Ints(const Tensor& t) {
  if (t.dtype() == DType::kI32) {
    const std::vector<int32_t> v = VectorOf<int32_t>(t);
    return std::vector<int64_t>(v.begin(), v.end());
  }
  return VectorOf<int64_t>(t);
}

std::vector<std::string> Strings(const Tensor& t) {
  std::vector<std::string> v;
  const int64_t w = t.size(1);
  for (int64_t i = 0; i < t.size(0); ++i) {
    const char* p = reinterpret_cast<const char*>(t.data<uint8_t>() + i * w);
    v.emplace_back(p, strnlen(p, static_cast<size_t>(w)));
  }
  return v;
}

}  // namespace foresight::testing
