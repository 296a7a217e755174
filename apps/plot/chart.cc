#include "chart.h"

#include <plplot.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace foresight::apps::plot {

namespace {

// cmap0: 0 the background, 1 axes and text, 2 the grid, then the lines'
// colours (a palette that stays distinct in print and for common colour
// blindness).
constexpr int kGridColor = 2;
constexpr int kFirstLineColor = 3;
constexpr unsigned char kPalette[][3] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},
                                         {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127},
                                         {188, 189, 34},  {23, 190, 207}};
constexpr int kNumColors = sizeof(kPalette) / sizeof(kPalette[0]);
// PLplot line styles: solid, long dashes, short dashes, dash-dot.
constexpr int kStyles[] = {1, 3, 2, 4};
constexpr int kNumStyles = sizeof(kStyles) / sizeof(kStyles[0]);

constexpr int kPanelWidth = 700;   // pixels (points for SVG)
constexpr int kPanelHeight = 420;

// PLplot reads '#' as the start of an escape sequence; "##" is a literal.
std::string PlText(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '#') out += '#';
  }
  return out;
}

// PLplot's abort messages (recoverable errors it reports and skips), kept
// so DrawChart can return them instead of printing a warning.
std::string* AbortMessage() {
  static std::string message;
  return &message;
}
void OnAbort(PLCHAR_VECTOR message) { *AbortMessage() = message; }

bool DeviceAvailable(const std::string& name) {
  constexpr int kMax = 256;
  const char* menus[kMax];
  const char* names[kMax];
  int count = kMax;
  const char** menu_ptr = menus;
  const char** name_ptr = names;
  plgDevs(&menu_ptr, &name_ptr, &count);
  for (int i = 0; i < count && i < kMax; ++i) {
    if (names[i] != nullptr && name == names[i]) return true;
  }
  return false;
}

// [lo, hi] of the values, widened so that PLplot gets a non-empty window
// and lines do not run along the frame.
void Range(std::vector<double> values, bool pad, double* lo, double* hi) {
  *lo = *std::min_element(values.begin(), values.end());
  *hi = *std::max_element(values.begin(), values.end());
  if (*hi - *lo < 1e-12 * std::max(1.0, std::fabs(*hi))) {
    const double d = std::max(0.5, std::fabs(*hi) * 0.05);
    *lo -= d;
    *hi += d;
  } else if (pad) {
    const double d = (*hi - *lo) * 0.05;
    *lo -= d;
    *hi += d;
  }
}

Status CheckPanel(const Panel& p, size_t index) {
  const std::string where = "panel " + std::to_string(index + 1) + " (" + p.title + ")";
  if (p.series.empty()) return InvalidArgument(where + " has no lines");
  for (const Series& s : p.series) {
    if (s.x.empty() || s.x.size() != s.y.size()) {
      return InvalidArgument(where + ": line '" + s.label + "' has " + std::to_string(s.x.size()) + " x and " +
                             std::to_string(s.y.size()) + " y values (expected equal and at least one)");
    }
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (p.log_x && s.x[i] <= 0)) {
        return InvalidArgument(where + ": line '" + s.label + "' has the point (" + std::to_string(s.x[i]) + ", " +
                               std::to_string(s.y[i]) + ")" + (p.log_x ? " (log x needs x > 0)" : ""));
      }
    }
  }
  return Status::OK();
}

void DrawPanel(const Panel& p) {
  std::vector<double> xs, ys;
  for (const Series& s : p.series) {
    for (double x : s.x) xs.push_back(p.log_x ? std::log10(x) : x);
    ys.insert(ys.end(), s.y.begin(), s.y.end());
  }
  double x0, x1, y0, y1;
  Range(xs, /*pad=*/false, &x0, &x1);
  Range(ys, /*pad=*/true, &y0, &y1);
  pladv(0);
  // The right third of the panel holds the legend.
  plvpor(0.13, 0.70, 0.14, 0.88);
  plwind(x0, x1, y0, y1);
  plwidth(1);
  pllsty(1);
  plschr(0, 0.8);
  // Whole-number x ticks, about 8 of them at most (0: PLplot chooses).
  const double x_tick = p.integer_x ? std::max(1.0, std::ceil((x1 - x0) / 8)) : 0;
  const PLINT x_sub = p.integer_x ? 1 : 0;
  plcol0(kGridColor);  // the grid first, light, under the frame and the lines
  plbox(p.log_x ? "gl" : "g", x_tick, x_sub, "g", 0, 0);
  plcol0(1);
  plbox(p.log_x ? "bcnstl" : "bcnst", x_tick, x_sub, "bcnstv", 0, 0);
  pllab(PlText(p.x_label).c_str(), PlText(p.y_label).c_str(), PlText(p.title).c_str());

  const size_t n = p.series.size();
  std::vector<std::string> text(n);
  std::vector<const char*> text_ptrs(n), symbols(n, "");
  std::vector<PLINT> opts(n, PL_LEGEND_LINE), colors(n), styles(n), text_colors(n, 1), symbol_numbers(n, 0);
  std::vector<PLINT> box_colors(n, 0), box_patterns(n, 0);
  std::vector<PLFLT> widths(n, 2.0), box_scales(n, 0), box_widths(n, 0), symbol_scales(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const Series& s = p.series[i];
    colors[i] = kFirstLineColor + s.color % kNumColors;
    styles[i] = kStyles[s.style % kNumStyles];
    plcol0(colors[i]);
    pllsty(styles[i]);
    plwidth(2.0);
    std::vector<PLFLT> x(s.x.size());
    for (size_t k = 0; k < x.size(); ++k) x[k] = p.log_x ? std::log10(s.x[k]) : s.x[k];
    plline(static_cast<PLINT>(x.size()), x.data(), s.y.data());
    if (x.size() == 1) plpoin(1, x.data(), s.y.data(), 4);  // a line of one point draws nothing: a circle
    text[i] = PlText(s.label);
    text_ptrs[i] = text[i].c_str();
  }
  pllsty(1);
  plwidth(1);
  PLFLT legend_w = 0, legend_h = 0;
  // Top-left corner just right of the plot's top-right corner.
  pllegend(&legend_w, &legend_h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
           PL_POSITION_INSIDE | PL_POSITION_LEFT | PL_POSITION_TOP, 1.03, 0.0, 0.07, 0, 1, 1, 0, 0,
           static_cast<PLINT>(n), opts.data(), 0.6, 0.7, 1.4, 0.0, text_colors.data(), text_ptrs.data(),
           box_colors.data(), box_patterns.data(), box_scales.data(), box_widths.data(), colors.data(),
           styles.data(), widths.data(), text_colors.data(), symbol_scales.data(), symbol_numbers.data(),
           symbols.data());
}

}  // namespace

StatusOr<ChartFormat> ChartFormatFor(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".svg") return ChartFormat::kSvg;
  if (ext == ".png") return ChartFormat::kPng;
  return InvalidArgument("--output " + path + ": unknown extension '" + ext +
                         "'; expected .svg or .png (the format follows the extension)");
}

Status DrawChart(const std::vector<Panel>& panels, const std::string& path) {
  FS_ASSIGN_OR_RETURN(const ChartFormat format, ChartFormatFor(path));
  if (panels.empty()) return InvalidArgument("nothing to plot");
  for (size_t i = 0; i < panels.size(); ++i) FS_RETURN_IF_ERROR(CheckPanel(panels[i], i));
  const char* device = format == ChartFormat::kSvg ? "svg" : "pngcairo";
  if (!DeviceAvailable(device)) {
    return FailedPrecondition(std::string("PLplot's ") + device + " driver is not installed" +
                              (format == ChartFormat::kPng ? " (Debian package plplot-driver-cairo)" : "") +
                              "; write " + (format == ChartFormat::kPng ? ".svg" : ".png") + " instead");
  }
  // PLplot exits the process when it cannot open its file: find out first.
  if (std::filesystem::is_directory(path)) return InvalidArgument("--output " + path + " is a directory");
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fclose(f);
  } else {
    return IoError("cannot write " + path + ": " + std::strerror(errno));
  }

  const int cols = panels.size() > 1 ? 2 : 1;
  const int rows = static_cast<int>((panels.size() + cols - 1) / cols);
  AbortMessage()->clear();
  plsabort(OnAbort);
  plsdev(device);
  plsfnam(path.c_str());
  plspage(0, 0, kPanelWidth * cols, kPanelHeight * rows, 0, 0);
  plscmap0n(kFirstLineColor + kNumColors);
  plscolbg(255, 255, 255);
  plscol0(1, 0, 0, 0);
  plscol0(kGridColor, 220, 220, 220);
  for (int i = 0; i < kNumColors; ++i) plscol0(kFirstLineColor + i, kPalette[i][0], kPalette[i][1], kPalette[i][2]);
  plssub(cols, rows);
  plinit();
  for (const Panel& p : panels) DrawPanel(p);
  plend();
  plsabort(nullptr);
  if (!AbortMessage()->empty()) return Internal("PLplot: " + *AbortMessage() + " (writing " + path + ")");
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size == 0) return IoError("PLplot wrote nothing to " + path);
  return Status::OK();
}

}  // namespace foresight::apps::plot
