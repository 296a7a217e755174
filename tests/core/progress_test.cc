#include "foresight/core/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace foresight {
namespace {

// Everything written to a tmpfile() sink so far.
std::string Contents(FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  return out;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    lines.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

TEST(ProgressFormat, Duration) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(45.2), "45s");
  EXPECT_EQ(FormatDuration(59.4), "59s");
  EXPECT_EQ(FormatDuration(59.6), "1m00s");
  EXPECT_EQ(FormatDuration(65), "1m05s");
  EXPECT_EQ(FormatDuration(3599), "59m59s");
  EXPECT_EQ(FormatDuration(3600 * 2 + 180), "2h03m");
  EXPECT_EQ(FormatDuration(86400 * 3 + 3600 * 4), "3d04h");
  EXPECT_EQ(FormatDuration(-1), "?");
  EXPECT_EQ(FormatDuration(1.0 / 0.0), "?");
}

TEST(ProgressFormat, CountAndRate) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(950), "950");
  EXPECT_EQ(FormatCount(2.5), "2.5");
  EXPECT_EQ(FormatCount(1234), "1.23k");
  EXPECT_EQ(FormatCount(12345), "12.3k");
  EXPECT_EQ(FormatCount(123456), "123k");
  EXPECT_EQ(FormatCount(999999), "1.00M");
  EXPECT_EQ(FormatCount(4.56e6), "4.56M");
  EXPECT_EQ(FormatCount(7.89e9), "7.89G");
  EXPECT_EQ(FormatRate(12345, "edges"), "12.3k edges/s");
  EXPECT_EQ(FormatRate(0, "it"), "0 it/s");
  EXPECT_EQ(FormatRate(-3, "it"), "0 it/s");
}

TEST(ProgressFormat, Line) {
  // 25 of 100 in 5 s: 5 it/s, 75 left -> 15 s.
  EXPECT_EQ(FormatProgressLine("epoch 1", 25, 100, 5.0, "it", "loss 0.53"),
            "epoch 1 25/100 (25.0%) 5 it/s ETA 15s | loss 0.53");
  EXPECT_EQ(FormatProgressLine("read", 3000, 0, 2.0, "rows", ""), "read 3000 1.50k rows/s");
  EXPECT_EQ(FormatProgressLine("x", 0, 10, 0.0, "it", ""), "x 0/10 (0.0%) 0 it/s ETA ?");
  EXPECT_EQ(FormatProgressLine("x", 10, 10, 1.0, "it", ""), "x 10/10 (100.0%) 10 it/s ETA 0s");
  // 1 per second with 65 left.
  EXPECT_EQ(FormatProgressLine("x", 10, 75, 10.0, "it", ""),
            "x 10/75 (13.3%) 1 it/s ETA 1m05s");
}

TEST(Progress, PlainModeNeverWritesCarriageReturns) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressOptions opt;
    opt.sink = f;
    opt.mode = ProgressOptions::Mode::kPlain;
    opt.plain_interval_s = 0;  // a line at every Advance
    opt.unit = "batch";
    Progress p("train", 3, opt);
    p.SetStatus("loss 1.5");
    p.Advance();
    p.Advance(2);
    p.Finish("acc 0.9");
    p.Finish("twice");  // ignored
  }
  const std::string out = Contents(f);
  std::fclose(f);
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_EQ(out.find('\033'), std::string::npos) << out;
  const auto lines = Lines(out);
  ASSERT_GE(lines.size(), 3u) << out;
  EXPECT_EQ(lines[0].rfind("train 0/3 (0.0%)", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("| loss 1.5"), std::string::npos) << lines[0];
  EXPECT_NE(out.find("train 3/3 (100.0%)"), std::string::npos) << out;
  EXPECT_EQ(lines.back().rfind("train: 3 batch in ", 0), 0u) << lines.back();
  EXPECT_NE(lines.back().find("| acc 0.9"), std::string::npos) << lines.back();
  EXPECT_EQ(out.find("twice"), std::string::npos);
}

TEST(Progress, PlainModeThrottles) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressOptions opt;
    opt.sink = f;
    opt.mode = ProgressOptions::Mode::kPlain;
    opt.plain_interval_s = 3600;
    Progress p("scan", 0, opt);
    for (int i = 0; i < 1000; ++i) p.Advance();
    p.Finish("");
  }
  const auto lines = Lines(Contents(f));
  std::fclose(f);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("scan: 1000 it in ", 0), 0u) << lines[0];
}

TEST(Progress, FinishLinePrintsTheCallersLineAsGiven) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressOptions opt;
    opt.sink = f;
    opt.mode = ProgressOptions::Mode::kPlain;
    opt.plain_interval_s = 3600;
    Progress p("epoch 1/2", 4, opt);
    for (int i = 0; i < 4; ++i) p.Advance();
    p.FinishLine("epoch 1/2: 4 batch in 8.00s");
    p.FinishLine("twice");
    p.Finish("and once more");
  }
  const auto lines = Lines(Contents(f));
  std::fclose(f);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "epoch 1/2: 4 batch in 8.00s");
}

TEST(Progress, TerminalModeRedrawsOneLine) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressOptions opt;
    opt.sink = f;
    opt.mode = ProgressOptions::Mode::kTerminal;
    opt.redraw_interval_s = 0;
    Progress p("epoch", 2, opt);
    p.Advance();
    p.Advance();
    p.Finish("done");
  }
  const std::string out = Contents(f);
  std::fclose(f);
  EXPECT_NE(out.find("\r\033[Kepoch 1/2 (50.0%)"), std::string::npos) << out;
  EXPECT_NE(out.find("\r\033[Kepoch 2/2 (100.0%)"), std::string::npos) << out;
  // Finish clears the status line, then prints the summary on its own line.
  const std::string tail = "\r\033[Kepoch: 2 it in ";
  EXPECT_NE(out.find(tail), std::string::npos) << out;
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(out.find('\n'), out.size() - 1) << "only the final line ends in a newline";
}

TEST(Progress, QuietWritesNothing) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressOptions opt;
    opt.sink = f;
    opt.mode = ProgressOptions::Mode::kPlain;
    opt.plain_interval_s = 0;
    opt.quiet = true;
    Progress p("a", 1, opt);
    p.Advance();
    p.Finish("x");
  }
  SetProgressEnabled(false);
  {
    ProgressOptions opt;
    opt.sink = f;
    opt.mode = ProgressOptions::Mode::kPlain;
    opt.plain_interval_s = 0;
    Progress p("b", 1, opt);
    p.Advance();
    p.Finish("x");
  }
  SetProgressEnabled(true);
  EXPECT_EQ(Contents(f), "");
  std::fclose(f);
}

TEST(Progress, ConcurrentAdvanceCountsEveryItem) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressOptions opt;
  opt.sink = f;
  opt.mode = ProgressOptions::Mode::kTerminal;
  opt.redraw_interval_s = 0;  // contend on the redraw slot too
  Progress p("par", 40000, opt);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&p] {
      for (int i = 0; i < 10000; ++i) p.Advance();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(p.done(), 40000);
  p.Finish("");
  EXPECT_NE(Contents(f).find("par: 40000 it in "), std::string::npos);
  std::fclose(f);
}

}  // namespace
}  // namespace foresight
