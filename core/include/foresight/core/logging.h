// Logging to stderr: FS_LOG(INFO) << "..."; levels DEBUG, INFO, WARNING, ERROR.
// FORESIGHT_LOG_LEVEL=debug|info|warning|error sets the threshold.
#pragma once

#include <sstream>
#include <string>

namespace foresight {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Writes one line atomically (no interleaving with the progress display).
void LogLine(LogLevel level, const std::string& text);
// The one terminal status line (core/progress.h draws it): replaces it on
// stderr now, and LogLine redraws it below every log line while it is
// non-empty. "" removes it. Only call when stderr is a terminal.
void SetTerminalStatusLine(const std::string& text);
// Text every later log line starts with after "foresight LEVEL: " (a
// multi-rank job sets "[rank r/N] "). Thread-safe.
void SetLogPrefix(const std::string& prefix);

class LogMessage {
 public:
  explicit LogMessage(LogLevel level) : level_(level) {}
  ~LogMessage() { LogLine(level_, stream_.str()); }
  std::ostringstream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

}  // namespace foresight

#define FS_LOG_LEVEL_DEBUG ::foresight::LogLevel::kDebug
#define FS_LOG_LEVEL_INFO ::foresight::LogLevel::kInfo
#define FS_LOG_LEVEL_WARNING ::foresight::LogLevel::kWarning
#define FS_LOG_LEVEL_ERROR ::foresight::LogLevel::kError
#define FS_LOG(level)                                                 \
  if (FS_LOG_LEVEL_##level < ::foresight::GetLogLevel()) {            \
  } else                                                              \
    ::foresight::LogMessage(FS_LOG_LEVEL_##level).stream()
