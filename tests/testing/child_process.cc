#include "testing/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cerrno>

#include "testing/testing.h"

extern char** environ;

namespace foresight::testing {

pid_t StartForesight(const std::vector<std::string>& args, const std::vector<std::string>& env,
                     const std::string& out_path, const std::string& err_path) {
  const std::string binary = BinaryDir() + "/foresight";
  std::vector<std::string> argv_s = {binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_s;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var = *e;
    bool replaced = false;
    for (const std::string& x : env) {
      const size_t eq = x.find('=');
      if (eq != std::string::npos && var.compare(0, eq + 1, x, 0, eq + 1) == 0) replaced = true;
    }
    if (!replaced) env_s.push_back(var);
  }
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    errno = err;
    return -1;
  }
  return pid;
}

int WaitChild(pid_t pid) { return WaitChild(pid, nullptr); }

int WaitChild(pid_t pid, int64_t* peak_rss_bytes) {
  int status = 0;
  pid_t r;
  struct rusage usage {};
  do {
    r = ::wait4(pid, &status, 0, &usage);
  } while (r < 0 && errno == EINTR);
  if (peak_rss_bytes != nullptr) *peak_rss_bytes = r < 0 ? 0 : static_cast<int64_t>(usage.ru_maxrss) * 1024;
  if (r < 0) return -1000;
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1000;
}

}  // namespace foresight::testing
