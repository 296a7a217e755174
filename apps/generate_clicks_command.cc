// `foresight generate clicks --tables T --rows R --dim D --samples N ...`: a
// synthetic click log labelled by a hidden teacher DLRM (datasets/clicks.h).
#include <charconv>
#include <cstdio>

#include "cli_values.h"
#include "command.h"
#include "foresight/core/context.h"
#include "foresight/core/progress.h"
#include "foresight/datasets/clicks.h"

namespace foresight::apps {

namespace {

class GenerateClicksCommand : public Command {
 public:
  explicit GenerateClicksCommand(CLI::App* app) : Command(app) {
    datasets::GenerateClicksOptions& o = options_;
    app->add_option("--output", o.output, "Dataset directory to create")->type_name("OUT")->required();
    app->add_flag("--overwrite", o.overwrite, "Replace an existing dataset at OUT");
    app->add_option("--name", o.name, "Manifest name (default: teacher-clicks)");
    app->add_option("--tables", o.num_tables, "Embedding tables / categorical fields (default: 26)")->type_name("T");
    app->add_option("--rows", o.rows, "Rows per table (default: 100000)")->type_name("R");
    app->add_option("--dim", o.dim, "Embedding dimension of the teacher (default: 16)")->type_name("D");
    app->add_option("--samples", o.num_samples, "Samples (default: 1000000)")->type_name("N");
    app->add_option("--dense-features", o.num_dense, "Dense features (default: 13)")->type_name("INT");
    app->add_option("--bag-sizes", bag_sizes_, "Ids per sample: one size for all tables or one per table (default: 1)")
        ->type_name("L|L1,L2,...");
    app->add_option("--zipf", o.zipf, "Zipf exponent of the ids over each table's rows (default: 1.05)")
        ->type_name("S");
    app->add_option("--seed", o.seed, "Seed: same options, same bytes (default: 0)")->type_name("K");
    app->add_option("--split", split_, "Train,val,test fractions by sample order (default: 0.8,0.1,0.1)")
        ->type_name("A,B,C");
    app->add_option("--informative-tables", o.informative_tables,
                    "Teacher: tables with full weight; the rest get a quarter (default: 8)")
        ->type_name("INT");
    app->add_option("--teacher-rank", o.rank, "Teacher: rank of each table (default: 4)")->type_name("INT");
    app->add_option("--popularity-scale", o.popularity_scale,
                    "Teacher: popularity rank at which a row's weight halves (default: 2000)")
        ->type_name("FLOAT");
    app->add_option("--sharpness", o.sharpness, "Teacher: standard deviation of the logit (default: 1.6)")
        ->type_name("FLOAT");
    app->add_option("--ctr", o.ctr, "Teacher: mean click probability (default: 0.25)")->type_name("FLOAT");
    // The generator streams in fixed-size chunks: no budget or spill folder to set.
    app->add_option("--threads", threads_, "CPU threads (default: online CPUs)")->type_name("INT");
    app->add_flag("--quiet", quiet_, "No progress display");
  }

  Status Prepare() override {
    if (!bag_sizes_.empty()) {
      options_.bag_sizes.clear();
      size_t b = 0;
      while (b <= bag_sizes_.size()) {
        size_t e = bag_sizes_.find(',', b);
        if (e == std::string::npos) e = bag_sizes_.size();
        const std::string item = bag_sizes_.substr(b, e - b);
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc() || end != item.data() + item.size()) {
          return InvalidArgument("--bag-sizes: expected integers separated by commas, got \"" + bag_sizes_ + "\"");
        }
        options_.bag_sizes.push_back(v);
        b = e + 1;
      }
    }
    if (!split_.empty()) {
      FS_ASSIGN_OR_RETURN(options_.split_fractions, ParseNumberList(split_, 3, "--split"));
    }
    if (threads_ < 0) return InvalidArgument("--threads: expected a count >= 0, got " + std::to_string(threads_));
    return Status::OK();
  }

  Status Run() override {
    UseThreads(threads_);
    SetProgressEnabled(!quiet_);
    datasets::GenerateClicksReport r;
    FS_RETURN_IF_ERROR(datasets::GenerateClicks(options_, CpuContext(options_.seed), &r));
    std::printf("wrote %s: %lld samples (%lld positive), train/val/test %lld/%lld/%lld\n", options_.output.c_str(),
                static_cast<long long>(r.num_samples), static_cast<long long>(r.positives),
                static_cast<long long>(r.num_train), static_cast<long long>(r.num_val),
                static_cast<long long>(r.num_test));
    std::printf("teacher test AUC %.4f, test logloss %.4f\n", r.teacher_test_auc, r.teacher_test_logloss);
    return Status::OK();
  }

 private:
  datasets::GenerateClicksOptions options_;
  std::string bag_sizes_, split_;
  int threads_ = 0;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> AddGenerateClicksCommand(CLI::App* root) {
  CLI::App* generate = root->get_subcommand("generate");
  CLI::App* clicks = generate->add_subcommand(
      "clicks", "A synthetic click log labelled by a hidden teacher DLRM (its test AUC is the target)");
  return std::make_unique<GenerateClicksCommand>(clicks);
}

}  // namespace foresight::apps
