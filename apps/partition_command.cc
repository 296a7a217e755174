// `foresight partition DATASET --parts P --method metis|stream ...`:
// partitions a dataset and renumbers it so every partition is a contiguous
// row range (graph/partition.h); prints the report as one JSON line.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli_values.h"
#include "command.h"
#include "foresight/core/context.h"
#include "foresight/core/progress.h"
#include "foresight/graph/partition.h"

namespace foresight::apps {

namespace {

class PartitionCommand : public Command {
 public:
  explicit PartitionCommand(CLI::App* app) : Command(app) {
    graph::PartitionOptions& o = options_;
    app->add_option("DATASET", dataset_, "Dataset directory to partition")->required();
    app->add_option("--parts", o.parts, "Number of partitions, 1..num_nodes")->type_name("P")->required();
    app->add_option("--method", o.method,
                    "metis (libmetis k-way, graph in memory) or stream (Fennel, O(N) memory) "
                    "(default: metis)")
        ->type_name("metis|stream");
    app->add_option("--memory-budget", memory_budget_,
                    "Peak RSS allowed; metis refuses above it (default: unlimited)")
        ->type_name("SIZE");
    app->add_option("--output", o.output, "Write the partitioned dataset here (default: replace DATASET)")
        ->type_name("OUT");
    app->add_flag("--overwrite", o.overwrite, "Replace an existing dataset at OUT");
    app->add_option("--seed", o.seed, "METIS seed (default: 0)")->type_name("UINT");
    app->add_option("--imbalance", o.imbalance,
                    "No partition above (1 + imbalance) * N / P (default: 0.05)")
        ->type_name("FLOAT");
    app->add_option("--node-order", o.node_order,
                    "Order of the nodes inside each partition: none (input order), degree (in-degree "
                    "descending: hot rows share pages) or bfs (breadth-first over in-edges: a node's "
                    "in-neighbours side by side) (default: none)")
        ->type_name("none|degree|bfs");
    AddThreadsFlag(app, &threads_);
    app->add_flag("--quiet", quiet_, "No progress display");
  }

  Status Prepare() override {
    if (!memory_budget_.empty()) {
      FS_ASSIGN_OR_RETURN(size_t b, ParseByteSize(memory_budget_, "--memory-budget"));
      options_.memory_budget_bytes = static_cast<int64_t>(b);
    }
    if (options_.parts < 1) return InvalidArgument("--parts must be >= 1, got " + std::to_string(options_.parts));
    if (options_.method != "metis" && options_.method != "stream") {
      return InvalidArgument("--method must be metis or stream, got \"" + options_.method + "\"");
    }
    if (options_.node_order != "none" && options_.node_order != "degree" && options_.node_order != "bfs") {
      return InvalidArgument("--node-order must be none, degree or bfs, got \"" + options_.node_order + "\"");
    }
    return Status::OK();
  }

  Status Run() override {
    UseThreads(threads_);
    SetProgressEnabled(!quiet_);
    FS_ASSIGN_OR_RETURN(graph::PartitionReport r,
                        graph::PartitionDataset(CpuContext(options_.seed), dataset_, options_));
    const nlohmann::json j = {{"dataset", r.output},
                              {"method", r.method},
                              {"parts", r.parts},
                              {"num_edges", r.num_edges},
                              {"edge_cut", r.edge_cut},
                              {"cut_fraction", r.cut_fraction},
                              {"balance", r.balance},
                              {"node_order", options_.node_order},
                              {"seconds", r.seconds},
                              {"peak_rss_bytes", r.peak_rss_bytes},
                              {"offsets", r.offsets}};
    std::printf("%s\n", j.dump().c_str());
    return Status::OK();
  }

 private:
  graph::PartitionOptions options_;
  std::string dataset_;
  std::string memory_budget_;
  int threads_ = 0;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> AddPartitionCommand(CLI::App* root) {
  CLI::App* app = root->add_subcommand(
      "partition", "Partition a dataset (METIS or streaming) and renumber it by partition");
  return std::make_unique<PartitionCommand>(app);
}

}  // namespace foresight::apps
