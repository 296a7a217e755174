// Starting the built `foresight` binary as a child process without a shell,
// so a test holds its real pid (to SIGKILL it at a moment it chooses) and
// can give it extra environment variables (the test hooks of
// storage/src/test_hooks.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace foresight::testing {

// Starts `foresight args...` with the test's environment plus `env`
// ("NAME=value" entries, replacing variables of the same name); its stdout
// and stderr go to the files `out_path` and `err_path` (truncated). Returns
// the pid, or -1 when it could not be started (errno set).
pid_t StartForesight(const std::vector<std::string>& args, const std::vector<std::string>& env,
                     const std::string& out_path, const std::string& err_path);

// Waits for child `pid`: its exit status, or minus the signal that killed it
// (-9 after SIGKILL).
int WaitChild(pid_t pid);
// The same, also giving the child's peak resident set (wait4's ru_maxrss)
// in *peak_rss_bytes (0 when the wait failed).
int WaitChild(pid_t pid, int64_t* peak_rss_bytes);

}  // namespace foresight::testing
