// `foresight generate graph --nodes N --edges E ... --output OUT`: a
// synthetic R-MAT node-classification dataset (datasets/generate.h).
#include <cstdio>

#include "cli_values.h"
#include "dataset_tool_flags.h"
#include "command.h"
#include "foresight/core/context.h"
#include "foresight/core/progress.h"
#include "foresight/datasets/edge_list_text.h"
#include "foresight/datasets/generate.h"

namespace foresight::apps {

namespace {

class GenerateGraphCommand : public Command {
 public:
  explicit GenerateGraphCommand(CLI::App* app) : Command(app) {
    datasets::GenerateGraphOptions& o = options_;
    app->add_option("--output", o.output, "Dataset directory to create")
        ->type_name("OUT")
        ->required();
    app->add_flag("--overwrite", o.overwrite, "Replace an existing dataset at OUT");
    app->add_option("--name", o.name, "Manifest name (default: rmat-planted)");
    app->add_option("--nodes", o.num_nodes, "Nodes (default: 1000000)")->type_name("INT");
    app->add_option("--edges", o.num_edges, "Edges drawn (default: 20000000)")->type_name("INT");
    app->add_option("--features", o.feature_dim, "Feature dimension (default: 128)")
        ->type_name("INT");
    app->add_option("--classes", o.num_classes, "Classes (default: 16)")->type_name("INT");
    app->add_option("--seed", o.seed, "Seed: same options, same bytes (default: 0)")
        ->type_name("UINT");
    app->add_option("--rmat", rmat_, "R-MAT quadrant probabilities a,b,c (default: 0.57,0.19,0.19)")
        ->type_name("A,B,C");
    app->add_option("--p-in", o.p_in, "Probability an edge stays in its source's class (default: 0.7)")
        ->type_name("FLOAT");
    app->add_option("--communities", o.num_communities,
                    "Planted partition: K communities scattered over the ids, classes = community mod classes, "
                    "--p-in the fraction of edges kept inside the source's community (default: 0 = none)")
        ->type_name("K");
    app->add_option("--feature-signal", o.feature_signal,
                    "Norm of the class mean added to the features (default: 1.0)")
        ->type_name("FLOAT");
    app->add_option("--train-frac", o.train_frac, "Training fraction (default: 0.1)")
        ->type_name("FLOAT");
    app->add_option("--val-frac", o.val_frac, "Validation fraction (default: 0.1)")
        ->type_name("FLOAT");
    app->add_option("--test-frac", o.test_frac, "Test fraction (default: 0.8)")->type_name("FLOAT");
    // Two plain flags, not CLI11's "--a,!--b" pair, which --help prints as
    // "--keep-multi-edges,--no-multi-edges{false}".
    CLI::Option* keep = app->add_flag("--keep-multi-edges", "Keep repeated edges (the default)");
    app->add_flag("--no-multi-edges", no_multi_edges_, "Drop repeated edges")->excludes(keep);
    app->add_flag("--keep-self-loops", o.keep_self_loops, "Keep u -> u edges");
    app->add_flag("--undirected", o.undirected, "Add v -> u for every u -> v");
    app->add_option("--feature-dtype", o.feature_dtype, "Stored feature type (default: f32)")
        ->type_name("f32|f16");
    app->add_option("--task", o.task,
                    "link: also split the edges into link-prediction triples (every node an entity) "
                    "(default: node)")
        ->type_name("node|link");
    app->add_option("--edge-split", edge_split_,
                    "--task link: train,val,test fractions of the edges (default: 0.9,0.05,0.05)")
        ->type_name("A,B,C");
    app->add_option("--edge-list", edge_list_,
                    "Also write the edges as a text edge list ('src dst' lines; gzip when FILE ends in .gz), "
                    "the input `preprocess --format edgelist` reads")
        ->type_name("FILE");
    tool_flags_.Add(app, &o.temp_dir);
  }

  Status Prepare() override {
    if (no_multi_edges_) options_.keep_multi_edges = false;
    if (!edge_split_.empty()) {
      if (options_.task != "link") return InvalidArgument("--edge-split applies to --task link");
      FS_ASSIGN_OR_RETURN(options_.edge_split, ParseNumberList(edge_split_, 3, "--edge-split"));
    }
    if (!rmat_.empty()) {
      FS_ASSIGN_OR_RETURN(std::vector<double> abc, ParseNumberList(rmat_, 3, "--rmat"));
      options_.rmat_a = abc[0];
      options_.rmat_b = abc[1];
      options_.rmat_c = abc[2];
    }
    return tool_flags_.Apply(&options_.memory_budget_bytes);
  }

  Status Run() override {
    tool_flags_.Activate();
    datasets::GenerateGraphReport r;
    FS_RETURN_IF_ERROR(datasets::GenerateGraph(options_, CpuContext(options_.seed), &r));
    std::printf("wrote %s: %lld nodes, %lld edges, train/val/test %lld/%lld/%lld\n",
                options_.output.c_str(), static_cast<long long>(r.num_nodes),
                static_cast<long long>(r.num_edges), static_cast<long long>(r.num_train),
                static_cast<long long>(r.num_val), static_cast<long long>(r.num_test));
    if (options_.num_communities > 0) {
      std::printf("%lld communities: %lld of %lld edges drawn (%.3f) inside one\n",
                  static_cast<long long>(options_.num_communities), static_cast<long long>(r.intra_community_edges),
                  static_cast<long long>(options_.num_edges),
                  options_.num_edges > 0 ? static_cast<double>(r.intra_community_edges) / options_.num_edges : 0.0);
    }
    if (!edge_list_.empty()) {
      datasets::EdgeListTextReport e;
      FS_RETURN_IF_ERROR(datasets::WriteEdgeListText(options_.output, edge_list_, /*progress=*/true, &e));
      std::printf("wrote %s: %lld edges, %lld bytes\n", edge_list_.c_str(), static_cast<long long>(e.edges),
                  static_cast<long long>(e.bytes));
    }
    return Status::OK();
  }

 private:
  datasets::GenerateGraphOptions options_;
  std::string rmat_;
  std::string edge_list_;
  std::string edge_split_;
  bool no_multi_edges_ = false;
  DatasetToolFlags tool_flags_;
};

}  // namespace

std::unique_ptr<Command> AddGenerateCommand(CLI::App* root) {
  CLI::App* generate = root->add_subcommand("generate", "Generate synthetic datasets");
  generate->require_subcommand(1);
  CLI::App* graph = generate->add_subcommand(
      "graph", "A synthetic R-MAT node-classification graph with planted classes");
  return std::make_unique<GenerateGraphCommand>(graph);
}

}  // namespace foresight::apps
