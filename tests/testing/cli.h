// Running the built `foresight` binary from tests, and looking at the files
// it leaves, as the CLI end-to-end suites do.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace foresight::testing {

struct CliResult {
  int code = -1;  // exit status; -1 when killed by a signal (a crash)
  std::string out, err;
};

// `s` quoted for sh.
std::string Quote(const std::string& s);

// Runs `command` through sh; stdout and stderr are captured apart.
CliResult RunShell(const std::string& command);
// Runs `<prefix> foresight <args>` through sh (args already shell-quoted
// where needed); stdout and stderr are captured apart.
CliResult RunForesight(const std::string& args, const std::string& prefix = "");
// Runs `FORESIGHT=<the built binary> <env> bash bench/<script> <args>` from
// the source tree, as a user reruns a benchmark script (args shell-quoted).
CliResult RunBenchScript(const std::string& env, const std::string& script, const std::string& args);

// Every file directly in `dir`, by name, with its contents.
std::map<std::string, std::string> DirContents(const std::string& dir);
// The names directly in `dir`, sorted.
std::vector<std::string> Entries(const std::string& dir);
// Whether `path` names anything (stat(2) succeeds).
bool PathExists(const std::string& path);
// The JSON objects of a JSON-lines file (a metrics file), blank lines skipped.
std::vector<nlohmann::json> ReadJsonLines(const std::string& path);
// Each line of `text` (a script's stdout) parsed; a line that is not JSON
// gives a discarded value (is_discarded()), so a test can say which.
std::vector<nlohmann::json> ParseJsonLines(const std::string& text);

// The bytes of the "smallest --memory-budget this run accepts: <x> <unit>"
// line of a `train --plan-only` output (GiB, MiB or KiB); 0 when the output
// has no such line, so a test's comparison with it fails.
int64_t SmallestBudgetInPlan(const std::string& plan);

}  // namespace foresight::testing
