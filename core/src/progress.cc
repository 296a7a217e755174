#include "foresight/core/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cmath>

#include "foresight/core/logging.h"

namespace foresight {

namespace {

std::atomic<bool> g_progress_enabled{true};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Wider than the terminal would wrap, and "\r" then only rewrites the last
// row: cut the line to the width (columns - 1; 0 = unknown, no cut).
size_t TerminalColumns() {
  struct winsize ws {};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) return ws.ws_col - 1;
  return 0;
}

}  // namespace

void SetProgressEnabled(bool enabled) { g_progress_enabled = enabled; }
bool ProgressEnabled() { return g_progress_enabled.load(); }

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  char buf[48];
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%" PRId64 "s", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
  } else if (s < 86400) {
    std::snprintf(buf, sizeof(buf), "%" PRId64 "h%02" PRId64 "m", s / 3600, (s % 3600) / 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%" PRId64 "d%02" PRId64 "h", s / 86400, (s % 86400) / 3600);
  }
  return buf;
}

std::string FormatCount(double value) {
  if (!std::isfinite(value)) return "?";
  char buf[48];
  const double a = std::fabs(value);
  static const char* kSuffix[] = {"", "k", "M", "G", "T", "P"};
  if (a < 1000) {
    // Whole numbers print without decimals; small rates keep one.
    if (value == std::floor(value) || a >= 100) {
      std::snprintf(buf, sizeof(buf), "%.0f", value);
    } else {
      std::snprintf(buf, sizeof(buf), "%.1f", value);
    }
    return buf;
  }
  int k = 0;
  double v = value;
  while (std::fabs(v) >= 999.5 && k < 5) {
    v /= 1000;
    ++k;
  }
  const double av = std::fabs(v);
  const char* fmt = av < 9.995 ? "%.2f%s" : av < 99.95 ? "%.1f%s" : "%.0f%s";
  std::snprintf(buf, sizeof(buf), fmt, v, kSuffix[k]);
  return buf;
}

std::string FormatRate(double per_second, const std::string& unit) {
  if (!std::isfinite(per_second) || per_second <= 0) return "0 " + unit + "/s";
  return FormatCount(per_second) + " " + unit + "/s";
}

std::string FormatProgressLine(const std::string& label, int64_t done, int64_t total,
                               double elapsed_s, const std::string& unit,
                               const std::string& extra) {
  std::string line = label;
  line += ' ';
  line += std::to_string(done);
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0.0;
  if (total > 0) {
    char pct[32];
    std::snprintf(pct, sizeof(pct), " (%.1f%%)",
                  100.0 * static_cast<double>(done) / static_cast<double>(total));
    line += '/';
    line += std::to_string(total);
    line += pct;
  }
  line += ' ';
  line += FormatRate(rate, unit);
  if (total > 0) {
    line += " ETA ";
    if (done >= total) {
      line += "0s";
    } else if (rate > 0) {
      line += FormatDuration(static_cast<double>(total - done) / rate);
    } else {
      line += '?';
    }
  }
  if (!extra.empty()) {
    line += " | ";
    line += extra;
  }
  return line;
}

Progress::Progress(std::string label, int64_t total, ProgressOptions options)
    : label_(std::move(label)),
      total_(total > 0 ? total : 0),
      options_(std::move(options)),
      enabled_(ProgressEnabled() && !options_.quiet),
      terminal_(false),
      start_ns_(NowNs()) {
  switch (options_.mode) {
    case ProgressOptions::Mode::kTerminal: terminal_ = true; break;
    case ProgressOptions::Mode::kPlain: terminal_ = false; break;
    case ProgressOptions::Mode::kAuto:
      terminal_ = (options_.sink == nullptr || options_.sink == stderr) && isatty(STDERR_FILENO);
      break;
  }
  // The first line waits one interval: no "0/N" flash, and a short job
  // prints only Finish.
  const double first = terminal_ ? options_.redraw_interval_s : options_.plain_interval_s;
  next_draw_ns_ = start_ns_ + static_cast<int64_t>(first * 1e9);
}

Progress::~Progress() {
  std::lock_guard<std::mutex> lock(mu_);
  if (enabled_ && terminal_ && !finished_) Emit("", /*status_line=*/true);
}

double Progress::ElapsedSeconds() const { return static_cast<double>(NowNs() - start_ns_) * 1e-9; }

void Progress::Advance(int64_t n) {
  done_.fetch_add(n, std::memory_order_relaxed);
  if (enabled_) MaybeDraw(/*force=*/false);
}

void Progress::SetStatus(const std::string& extra) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    extra_ = extra;
  }
  if (enabled_) MaybeDraw(/*force=*/false);
}

void Progress::MaybeDraw(bool force) {
  const int64_t now = NowNs();
  int64_t due = next_draw_ns_.load(std::memory_order_relaxed);
  if (!force) {
    if (now < due) return;
    // One thread wins the slot; the others skip instead of queueing.
    const double interval = terminal_ ? options_.redraw_interval_s : options_.plain_interval_s;
    if (!next_draw_ns_.compare_exchange_strong(due, now + static_cast<int64_t>(interval * 1e9))) {
      return;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  const std::string line = FormatProgressLine(label_, done(), total_, ElapsedSeconds(),
                                              options_.unit, extra_);
  Emit(line, /*status_line=*/terminal_);
}

void Progress::Emit(const std::string& line, bool status_line) {
  FILE* sink = options_.sink == nullptr ? stderr : options_.sink;
  const bool via_log = sink == stderr;
  if (status_line) {
    std::string cut = line;
    const size_t cols = TerminalColumns();
    if (cols > 0 && cut.size() > cols) cut.resize(cols);
    if (via_log && isatty(STDERR_FILENO)) {
      SetTerminalStatusLine(cut);
    } else {
      std::fprintf(sink, "\r\033[K%s", cut.c_str());
      std::fflush(sink);
    }
    return;
  }
  if (via_log) {
    LogLine(LogLevel::kInfo, line);
  } else {
    std::fprintf(sink, "%s\n", line.c_str());
    std::fflush(sink);
  }
}

void Progress::Finish(const std::string& summary) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  const double elapsed = ElapsedSeconds();
  const int64_t n = done();
  std::string line = label_ + ": " + std::to_string(n) + " " + options_.unit + " in " +
                     FormatDuration(elapsed) + " (" +
                     FormatRate(elapsed > 0 ? static_cast<double>(n) / elapsed : 0.0,
                                options_.unit) +
                     ")";
  if (!summary.empty()) line += " | " + summary;
  if (terminal_) Emit("", /*status_line=*/true);
  Emit(line, /*status_line=*/false);
}

void Progress::FinishLine(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  if (terminal_) Emit("", /*status_line=*/true);
  Emit(line, /*status_line=*/false);
}

}  // namespace foresight
