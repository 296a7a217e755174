#include "testing/cli.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "testing/testing.h"

namespace foresight::testing {

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

CliResult RunShell(const std::string& command) {
  TempDir tmp;
  const std::string err_file = tmp.File("stderr");
  const std::string cmd = command + " 2>" + Quote(err_file);
  CliResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = ReadFile(err_file);
  return r;
}

CliResult RunForesight(const std::string& args, const std::string& prefix) {
  return RunShell(prefix + Quote(BinaryDir() + "/foresight") + " " + args);
}

CliResult RunBenchScript(const std::string& env, const std::string& script, const std::string& args) {
  return RunShell("FORESIGHT=" + Quote(BinaryDir() + "/foresight") + " " + env + " bash " +
                  Quote(SourceDir() + "/bench/" + script) + " " + args);
}

std::map<std::string, std::string> DirContents(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    files[e.path().filename().string()] = ReadFile(e.path().string());
  }
  return files;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(ReadFile(path));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

std::vector<nlohmann::json> ParseJsonLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false));
  return lines;
}

int64_t SmallestBudgetInPlan(const std::string& plan) {
  const std::string key = "smallest --memory-budget this run accepts: ";
  const size_t at = plan.find(key);
  if (at == std::string::npos) return 0;
  double value = 0;
  char unit[8] = {0};
  if (std::sscanf(plan.c_str() + at + key.size(), "%lf %3s", &value, unit) != 2) return 0;
  const std::string u(unit);
  const double scale = u == "GiB" ? 1 << 30 : u == "MiB" ? 1 << 20 : u == "KiB" ? 1 << 10 : u == "B" ? 1 : 0;
  return static_cast<int64_t>(value * scale);
}

}  // namespace foresight::testing
