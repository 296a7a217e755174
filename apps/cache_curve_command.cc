// `foresight cache-curve DATASET [train's sampling flags] [--output F]`:
// the miss-ratio curve of each feature-cache policy over cache sizes. One
// epoch's mini-batches are sampled once, as `foresight train` samples them
// (trainer/feature_trace.h), and the rows they read are replayed through
// each planner at each size as the pipeline would drive it
// (cache/trace_replay.h): no row is read, so a whole curve costs about one
// epoch of sampling. The counts are those `train --metrics` reports for
// epoch 1 with the same flags, policy and cache size: miss ratio =
// cache_misses / rows requested (1 - the hit rate), from a cold cache, so
// lookahead and lru never fall below distinct rows / rows requested (the
// static policy's fill, done before the first batch, is no batch's miss),
// and rows_read / bytes_read = what the store serves, the static fill
// included. The lookahead points have train's static tier (--hot-fraction,
// auto by default). One JSON line per (policy, size) on stdout; with --output, a
// chart of miss ratio against cache size, a line per policy.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <sstream>

#include "cli_values.h"
#include "command.h"
#include "foresight/cache/cache_planner.h"
#include "foresight/cache/trace_replay.h"
#include "foresight/trainer/feature_trace.h"
#include "plot/chart.h"
#include "train_settings.h"

namespace foresight::apps {

namespace {

// The `train` flags that shape the trace (and --threads, and the lookahead
// cache's --hot-fraction, applied to the lookahead points); any other train
// key may come from --config, where it is accepted and has no effect.
constexpr const char* kTraceKeys[] = {"batch-size", "fanouts",  "seed",    "order",
                                      "sampling",   "resident-partitions", "lookahead", "threads",
                                      "hot-fraction"};
constexpr int kDefaultPoints = 12;  // 1% .. 100%, log-spaced

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

class CacheCurveCommand : public Command {
 public:
  explicit CacheCurveCommand(CLI::App* app) : Command(app) {
    app->add_option("DATASET", dataset_, "Dataset directory (from `foresight preprocess`)")->required();
    app->add_option("--config", config_, "A train config file (YAML or TOML); its sampling keys apply")
        ->type_name("FILE");
    for (const char* name : kTraceKeys) {
      const TrainKey* key = FindTrainKey(name);
      Flag& flag = flags_.emplace_back();
      flag.key = key;
      flag.option = app->add_option(std::string("--") + name, flag.text,
                                    std::string(key->help) + " (as for train; default: " +
                                        FormatTrainValue(*key, TrainOptions()) + ")");
    }
    app->add_option("--policies", policies_, "Comma-separated cache policies (default: lookahead,lru,static)")
        ->type_name("LIST");
    app->add_option("--sizes", sizes_,
                    "Comma-separated cache sizes: percentages of the feature rows (5%) or byte sizes (64M) "
                    "(default: 12 sizes, 1% to 100%, log-spaced)")
        ->type_name("LIST");
    app->add_option("--epoch", epoch_, "The epoch whose batches are sampled, from 1 (default: 1)");
    app->add_option("--output", output_, "Chart file: .svg or .png (default: JSON lines only)")->type_name("FILE");
  }

  Status Prepare() override {
    std::vector<FlagValue> given;
    for (const Flag& f : flags_) {
      if (f.option->count() > 0) given.push_back({f.key->name, ConfigValue::Text(f.text)});
    }
    FS_ASSIGN_OR_RETURN(options_, ResolveTrainOptions(config_, given, dataset_));
    FS_RETURN_IF_ERROR(options_.Validate());
    if (epoch_ < 1) return InvalidArgument("--epoch must be >= 1, got " + std::to_string(epoch_));
    for (const std::string& name : SplitCommas(policies_)) {
      FS_ASSIGN_OR_RETURN(const cache::Policy p, cache::ParsePolicy(name));
      policy_list_.push_back(p);
    }
    if (policy_list_.empty()) return InvalidArgument("--policies: expected at least one policy");
    if (!output_.empty()) FS_RETURN_IF_ERROR(plot::ChartFormatFor(output_).status());
    // Sizes are checked here; byte sizes become rows once the row width is known.
    for (const std::string& s : SplitCommas(sizes_)) {
      Size size;
      if (!s.empty() && s.back() == '%') {
        char* end = nullptr;
        const std::string number = s.substr(0, s.size() - 1);
        size.percent = std::strtod(number.c_str(), &end);
        if (number.empty() || end != number.c_str() + number.size() || !(size.percent > 0) ||
            size.percent > 100) {
          return InvalidArgument("--sizes: expected a percentage in (0%, 100%], got '" + s + "'");
        }
      } else {
        FS_ASSIGN_OR_RETURN(const size_t bytes, ParseByteSize(s, "--sizes"));
        size.bytes = static_cast<int64_t>(bytes);
      }
      size_list_.push_back(size);
    }
    if (sizes_.empty()) {
      for (int i = 0; i < kDefaultPoints; ++i) {
        size_list_.push_back({std::pow(100.0, static_cast<double>(i) / (kDefaultPoints - 1)), 0});
      }
    }
    return Status::OK();
  }

  Status Run() override {
    UseThreads(options_.threads);
    FS_ASSIGN_OR_RETURN(const trainer::FeatureTrace trace, trainer::SampleFeatureTrace(options_, epoch_ - 1));
    int64_t requested = 0;
    for (const auto& b : trace.batches) requested += static_cast<int64_t>(b.size());
    if (requested == 0) return FailedPrecondition(dataset_ + ": the epoch's batches read no rows");
    // Rows the epoch reads at least once: every policy reads each of them
    // at least once from a cold cache, the floor of the curve.
    int64_t distinct = 0;
    {
      std::vector<bool> seen(static_cast<size_t>(trace.num_nodes), false);
      for (const auto& b : trace.batches) {
        for (int64_t k : b) {
          if (!seen[static_cast<size_t>(k)]) distinct += seen[static_cast<size_t>(k)] = true;
        }
      }
    }
    cache::ReplayOptions replay;
    replay.max_in_flight = trainer::kPipelineBatchesInFlight;
    std::vector<plot::Series> lines;
    for (size_t p = 0; p < policy_list_.size(); ++p) {
      plot::Series line;
      line.label = cache::PolicyName(policy_list_[p]);
      line.color = static_cast<int>(p);
      line.style = static_cast<int>(p);
      // The static policy's rows, and the lookahead's static tier (its rows
      // are the same in-degree order, as in training).
      if (policy_list_[p] != cache::Policy::kLru) replay.static_keys = trace.keys_by_in_degree;
      TrainOptions as_trained = options_;
      as_trained.cache_policy = cache::PolicyName(policy_list_[p]);
      for (const Size& size : size_list_) {
        cache::CacheConfig c;
        c.policy = policy_list_[p];
        c.row_bytes = trace.row_bytes;
        const int64_t rows = size.bytes > 0 ? size.bytes / trace.row_bytes
                                            : static_cast<int64_t>(std::llround(size.percent / 100.0 *
                                                                               trace.num_nodes));
        // Training caps the cache at the whole feature file, as here.
        c.capacity_bytes = std::min(rows, trace.num_nodes) * trace.row_bytes;
        c.lookahead = options_.EffectiveLookahead();
        c.key_space = trace.num_nodes;
        const int64_t slots = c.capacity_bytes / c.row_bytes;
        if (c.policy == cache::Policy::kLookahead) c.hot_slots = trainer::HotSlots(as_trained, slots);
        FS_ASSIGN_OR_RETURN(const cache::CacheCounters k, cache::ReplayTrace(c, trace.batches, replay));
        const double fraction = static_cast<double>(slots) / static_cast<double>(trace.num_nodes);
        // What the store serves: misses admitted to a slot or read around
        // the cache, and the static policy's whole fill.
        const int64_t rows_read = k.fetches + k.bypassed;
        const double miss_ratio = static_cast<double>(k.misses) / static_cast<double>(requested);
        nlohmann::json j = {{"policy", line.label},
                            {"cache_bytes", c.capacity_bytes},
                            {"cache_rows", slots},
                            {"hot_rows", c.hot_slots},
                            {"cache_fraction", fraction},
                            {"hits", k.hits},
                            {"misses", k.misses},
                            {"rows_read", rows_read},
                            {"miss_ratio", miss_ratio},
                            {"bytes_read", rows_read * trace.row_bytes},
                            {"rows_requested", requested},
                            {"distinct_rows", distinct},
                            {"batches", trace.batches.size()},
                            {"epoch", epoch_},
                            {"lookahead", options_.EffectiveLookahead()}};
        std::printf("%s\n", j.dump().c_str());
        if (slots > 0) {  // a log axis has no 0
          line.x.push_back(100.0 * fraction);
          line.y.push_back(miss_ratio);
        }
      }
      if (!line.x.empty()) lines.push_back(std::move(line));
    }
    std::fflush(stdout);
    if (output_.empty()) return Status::OK();
    if (lines.empty()) return InvalidArgument("--sizes: every size holds less than one row; nothing to plot");
    plot::Panel panel;
    panel.title = std::filesystem::path(dataset_).filename().string() + ": feature cache miss ratio, epoch " +
                  std::to_string(epoch_) + ", lookahead " + std::to_string(options_.EffectiveLookahead());
    panel.x_label = "cache size (% of feature rows)";
    panel.y_label = "miss ratio (misses / rows requested)";
    panel.log_x = true;
    panel.series = std::move(lines);
    return plot::DrawChart({panel}, output_);
  }

 private:
  struct Flag {
    const TrainKey* key = nullptr;
    CLI::Option* option = nullptr;
    std::string text;
  };
  struct Size {
    double percent = 0;  // of the feature rows, or
    int64_t bytes = 0;   // a capacity in bytes
  };

  std::string dataset_;
  std::string config_;
  std::deque<Flag> flags_;
  std::string policies_ = "lookahead,lru,static";
  std::string sizes_;
  int epoch_ = 1;
  std::string output_;
  TrainOptions options_;
  std::vector<cache::Policy> policy_list_;
  std::vector<Size> size_list_;
};

}  // namespace

std::unique_ptr<Command> AddCacheCurveCommand(CLI::App* root) {
  CLI::App* app = root->add_subcommand(
      "cache-curve",
      "Miss ratio of each feature-cache policy over cache sizes, from one sampled epoch's batches");
  return std::make_unique<CacheCurveCommand>(app);
}

}  // namespace foresight::apps
