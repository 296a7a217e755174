#include "foresight/core/logging.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace foresight {

namespace {

LogLevel LevelFromEnv() {
  const char* v = std::getenv("FORESIGHT_LOG_LEVEL");
  if (v == nullptr) return LogLevel::kInfo;
  if (std::strcmp(v, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(v, "warning") == 0) return LogLevel::kWarning;
  if (std::strcmp(v, "error") == 0) return LogLevel::kError;
  return LogLevel::kInfo;
}

std::atomic<int> g_level{static_cast<int>(LevelFromEnv())};
std::mutex g_log_mu;
std::string g_status_line;  // guarded by g_log_mu
std::string g_prefix;       // guarded by g_log_mu

const char* Tag(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "";
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }

void LogLine(LogLevel level, const std::string& text) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  // "\r\033[K" clears a progress line the display may have left on a tty.
  const bool tty = isatty(STDERR_FILENO);
  std::fprintf(stderr, "%sforesight %s: %s%s\n", tty ? "\r\033[K" : "", Tag(level), g_prefix.c_str(),
               text.c_str());
  if (tty && !g_status_line.empty()) std::fputs(g_status_line.c_str(), stderr);
  std::fflush(stderr);
}

void SetLogPrefix(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_prefix = prefix;
}

void SetTerminalStatusLine(const std::string& text) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_status_line = text;
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
}

}  // namespace foresight
