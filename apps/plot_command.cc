// `foresight plot METRICS.jsonl... --output FILE.svg|.png`: the training
// curves of one or more runs, overlaid: loss, then a panel per quality
// metric the files carry (accuracy, AUC, log loss, MRR), and for runs with
// a cache its hit rate and the bytes read per epoch. One JSON line on
// stdout says what was drawn.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <set>

#include "command.h"
#include "plot/chart.h"
#include "plot/metrics_file.h"

namespace foresight::apps {

namespace {

using plot::MetricsRun;
using plot::Panel;
using plot::Series;

// A quality metric's panel: the keys ending in `suffix`.
struct MetricGroup {
  const char* suffix;
  const char* title;
};
constexpr MetricGroup kGroups[] = {
    {"_acc", "accuracy"}, {"_auc", "AUC"}, {"_logloss", "log loss"}, {"_mrr", "MRR"}};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// train_ before val_ before test_ (then by name): the same style for the
// same split in every panel.
int SplitRank(const std::string& key) {
  if (key.rfind("train_", 0) == 0) return 0;
  if (key.rfind("val_", 0) == 0) return 1;
  if (key.rfind("test_", 0) == 0) return 2;
  return 3;
}

Series SeriesOf(const std::string& label, const std::vector<std::pair<double, double>>& points, int color,
                int style, double scale = 1.0) {
  Series s;
  s.label = label;
  s.color = color;
  s.style = style;
  for (const auto& [x, y] : points) {
    s.x.push_back(x);
    s.y.push_back(y * scale);
  }
  return s;
}

// hits / (hits + misses) for the epochs that requested rows through a cache.
std::vector<std::pair<double, double>> HitRate(const MetricsRun& run) {
  std::vector<std::pair<double, double>> out;
  const auto h = run.columns.find("cache_hits");
  const auto m = run.columns.find("cache_misses");
  if (h == run.columns.end() || m == run.columns.end()) return out;
  std::map<double, double> misses(m->second.begin(), m->second.end());
  for (const auto& [epoch, hits] : h->second) {
    const auto it = misses.find(epoch);
    if (it != misses.end() && hits + it->second > 0) out.emplace_back(epoch, hits / (hits + it->second));
  }
  return out;
}

class PlotCommand : public Command {
 public:
  explicit PlotCommand(CLI::App* app) : Command(app) {
    app->add_option("METRICS", files_, "Metrics files (train --metrics FILE), one line each in the legend")
        ->required()
        ->expected(1, -1);
    app->add_option("--output", output_, "Chart file: .svg or .png")->required()->type_name("FILE");
  }

  Status Prepare() override { return plot::ChartFormatFor(output_).status(); }

  Status Run() override {
    std::vector<MetricsRun> runs;
    for (const std::string& f : files_) {
      FS_ASSIGN_OR_RETURN(MetricsRun run, plot::ReadMetricsFile(f));
      runs.push_back(std::move(run));
    }
    const std::vector<std::string> labels = Labels();
    std::vector<Panel> panels;
    Panel loss{"training loss", "epoch", "loss", false, false, {}};
    for (size_t r = 0; r < runs.size(); ++r) {
      const auto it = runs[r].columns.find("loss");
      if (it != runs[r].columns.end()) loss.series.push_back(SeriesOf(labels[r], it->second, int(r), 0));
    }
    if (!loss.series.empty()) panels.push_back(std::move(loss));
    for (const MetricGroup& g : kGroups) {
      std::set<std::pair<int, std::string>> keys;  // by split, then name
      for (const MetricsRun& run : runs) {
        for (const auto& [key, points] : run.columns) {
          if (EndsWith(key, g.suffix)) keys.emplace(SplitRank(key), key);
        }
      }
      if (keys.empty()) continue;
      Panel p{g.title, "epoch", g.title, false, false, {}};
      for (size_t r = 0; r < runs.size(); ++r) {
        int style = 0;
        for (const auto& [rank, key] : keys) {
          const auto it = runs[r].columns.find(key);
          if (it != runs[r].columns.end()) {
            p.series.push_back(SeriesOf(labels[r] + " " + key, it->second, int(r), style));
          }
          ++style;
        }
      }
      panels.push_back(std::move(p));
    }
    Panel hit_rate{"feature cache hit rate", "epoch", "hits / rows requested", false, false, {}};
    Panel bytes{"bytes read from the feature store", "epoch", "MiB per epoch", false, false, {}};
    for (size_t r = 0; r < runs.size(); ++r) {
      const auto rate = HitRate(runs[r]);
      if (!rate.empty()) hit_rate.series.push_back(SeriesOf(labels[r], rate, int(r), 0));
      const auto it = runs[r].columns.find("bytes_read");
      if (it != runs[r].columns.end() && HasPositive(it->second)) {
        bytes.series.push_back(SeriesOf(labels[r], it->second, int(r), 0, 1.0 / (1 << 20)));
      }
    }
    if (!hit_rate.series.empty()) panels.push_back(std::move(hit_rate));
    if (!bytes.series.empty()) panels.push_back(std::move(bytes));
    for (Panel& p : panels) p.integer_x = true;  // epochs
    if (panels.empty()) {
      return InvalidArgument("nothing to plot: the files carry none of loss, *_acc, *_auc, *_logloss, *_mrr, "
                             "cache_hits/cache_misses or bytes_read");
    }
    FS_RETURN_IF_ERROR(plot::DrawChart(panels, output_));
    nlohmann::json j = {{"output", output_}, {"runs", labels}};
    for (const Panel& p : panels) {
      nlohmann::json lines = nlohmann::json::array();
      for (const Series& s : p.series) lines.push_back(s.label);
      j["panels"].push_back({{"title", p.title}, {"lines", lines}});
    }
    std::printf("%s\n", j.dump().c_str());
    return Status::OK();
  }

 private:
  static bool HasPositive(const std::vector<std::pair<double, double>>& points) {
    for (const auto& pt : points) {
      if (pt.second > 0) return true;
    }
    return false;
  }

  // Each file's name without its extension, or the path as given when two
  // files share a name.
  std::vector<std::string> Labels() const {
    std::vector<std::string> labels;
    std::set<std::string> seen, repeated;
    for (const std::string& f : files_) {
      labels.push_back(std::filesystem::path(f).stem().string());
      if (!seen.insert(labels.back()).second) repeated.insert(labels.back());
    }
    for (size_t i = 0; i < labels.size(); ++i) {
      if (repeated.count(labels[i]) != 0) labels[i] = files_[i];
    }
    return labels;
  }

  std::vector<std::string> files_;
  std::string output_;
};

}  // namespace

std::unique_ptr<Command> AddPlotCommand(CLI::App* root) {
  CLI::App* app = root->add_subcommand("plot", "Draw training curves from metrics files (SVG or PNG)");
  return std::make_unique<PlotCommand>(app);
}

}  // namespace foresight::apps
