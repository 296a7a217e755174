// Progress display for long-running loops (preprocessing passes, epochs).
// On a terminal it redraws one status line (at most ~10 times a second) with
// count/total, rate, ETA and a free-form status; when stderr is not a
// terminal (logs, CI) it prints plain lines at most every few seconds and
// never writes carriage returns. Log lines (core/logging.h) print above the
// status line, which is then redrawn.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace foresight {

// Process-wide switch: false silences every Progress (the CLI's --quiet).
// Thread-safe. Default: enabled.
void SetProgressEnabled(bool enabled);
bool ProgressEnabled();

struct ProgressOptions {
  // Where lines go. Default: nullptr = stderr (through core/logging.h so a
  // log line never tears the status line). Tests pass a tmpfile().
  FILE* sink = nullptr;
  // kAuto: terminal mode when the sink is stderr and isatty(stderr).
  enum class Mode { kAuto, kTerminal, kPlain };
  Mode mode = Mode::kAuto;
  // Name of one item in rates ("it/s", "edges/s"). Default: "it".
  std::string unit = "it";
  // Minimum time between two terminal redraws. Default: 0.1 s.
  double redraw_interval_s = 0.1;
  // Minimum time between two plain lines. Default: 5 s.
  double plain_interval_s = 5.0;
  // Silences this display only (the global switch silences all).
  bool quiet = false;
};

// "45s", "1m05s", "2h03m", "3d04h"; "?" for negative or non-finite input.
std::string FormatDuration(double seconds);
// "950", "12.3k", "4.56M", "7.89G" (3 significant digits above 1000).
std::string FormatCount(double value);
// Items per second with its unit: "312/s"-style via FormatCount, e.g.
// "12.3k it/s"; "0 it/s" for non-positive rates.
std::string FormatRate(double per_second, const std::string& unit);
// One status line without control characters:
//   "<label> <done>/<total> (<pct>%) <rate> ETA <eta> | <extra>"
// total <= 0 drops the "/total (pct%)" and ETA parts; an empty extra drops
// " | extra". ETA is "?" until the rate is known.
std::string FormatProgressLine(const std::string& label, int64_t done, int64_t total,
                               double elapsed_s, const std::string& unit,
                               const std::string& extra);

// One progress display. Advance and SetStatus may be called from any thread
// concurrently; Finish once, from one thread, after all Advance calls.
class Progress {
 public:
  // total: expected number of items, 0 when unknown.
  Progress(std::string label, int64_t total, ProgressOptions options = {});
  // Removes the status line if Finish was not called (no summary printed).
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Adds n done items. Lock-free except when a redraw is due.
  void Advance(int64_t n = 1);
  // Replaces the free-form tail, e.g. "loss 0.53 | sample 12% gather 30%".
  void SetStatus(const std::string& extra);
  // Prints the final line "<label>: <done> <unit> in <time> (<rate>) | <summary>"
  // and removes the status line. Later calls do nothing.
  void Finish(const std::string& summary);
  // Prints `line` as the final line, as given, and removes the status line:
  // for a caller whose own clock and counts must be what the line says
  // (the trainer's epoch line quotes its metrics). Later calls do nothing.
  void FinishLine(const std::string& line);

  int64_t done() const { return done_.load(std::memory_order_relaxed); }

 private:
  double ElapsedSeconds() const;
  // Draws when at least `interval` since the last draw, or when forced.
  void MaybeDraw(bool force);
  void Emit(const std::string& line, bool status_line);

  const std::string label_;
  const int64_t total_;
  const ProgressOptions options_;
  bool enabled_;
  bool terminal_;
  const int64_t start_ns_;
  std::atomic<int64_t> done_{0};
  std::atomic<int64_t> next_draw_ns_{0};
  std::mutex mu_;  // guards extra_, finished_ and the writes
  std::string extra_;
  bool finished_ = false;
};

}  // namespace foresight
