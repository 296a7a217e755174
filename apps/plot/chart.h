// Line charts for `foresight plot` and `foresight cache-curve`, drawn by
// PLplot: one or more panels of lines on a page, each panel with its axes,
// title and a legend naming every line, written as SVG (PLplot's svg
// driver: text stays text) or PNG (its pngcairo driver).
#pragma once

#include <string>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::apps::plot {

enum class ChartFormat { kSvg, kPng };

// From the output file's extension (.svg or .png, any case);
// InvalidArgument naming the file and the choices otherwise.
StatusOr<ChartFormat> ChartFormatFor(const std::string& path);

struct Series {
  std::string label;  // the legend's text
  std::vector<double> x, y;  // equal lengths, at least one point
  int color = 0;  // index into the palette (wraps)
  int style = 0;  // line style: 0 solid, 1 dashed, 2 dotted, ... (wraps)
};

struct Panel {
  std::string title, x_label, y_label;
  bool log_x = false;  // x values must then be > 0
  bool integer_x = false;  // x ticks on whole numbers only (epochs)
  std::vector<Series> series;  // at least one
};

// Draws `panels` (at most 2 a row) on one page and writes it to `path`.
// InvalidArgument for an empty chart, a series without points or with
// unequal x and y, a non-finite value, or log_x with a value <= 0;
// FailedPrecondition when the driver is not installed (naming the Debian
// package); an I/O error naming the file when it cannot be written.
// Not thread-safe: PLplot keeps global state.
Status DrawChart(const std::vector<Panel>& panels, const std::string& path);

}  // namespace foresight::apps::plot
