// `foresight preprocess --format linqs|edgelist|ogb ... --output OUT`: raw
// graph files to a dataset directory (datasets/preprocess.h has the details
// of every flag); `--format criteo|csv`: click logs to a clicks dataset
// (click_preprocess_flags.h, datasets/clicks.h); `--format sequences
// INPUT`: user action logs to a sequences dataset (datasets/sequences.h).
#include <cstdio>

#include "cli_values.h"
#include "click_preprocess_flags.h"
#include "dataset_tool_flags.h"
#include "command.h"
#include "foresight/core/context.h"
#include "foresight/core/progress.h"
#include "foresight/datasets/preprocess.h"
#include "foresight/datasets/sequences.h"
#include "foresight/datasets/triples.h"
#include "foresight/storage/link_triples.h"

namespace foresight::apps {

namespace {

class PreprocessCommand : public Command {
 public:
  explicit PreprocessCommand(CLI::App* app) : Command(app) {
    datasets::PreprocessOptions& o = options_;
    app->add_option("--format", format_, "Input format (default: edgelist)")
        ->type_name("linqs|edgelist|ogb|criteo|csv|triples|sequences");
    app->add_option("INPUT", positional_,
                    "sequences: the 'user item' file, grouped by user in time order (or --input FILE)")
        ->type_name("FILE");
    app->add_option("--input", inputs_,
                    "Input folder (linqs: *.content + *.cites; ogb: raw/, split/), or criteo/csv: "
                    "click-log files split by --split")
        ->type_name("DIR|FILE...");
    app->add_option("--output", o.output, "Dataset directory to create")
        ->type_name("OUT")
        ->required();
    app->add_flag("--overwrite", o.overwrite, "Replace an existing dataset at OUT");
    app->add_option("--name", o.name, "Manifest name (default: the input's base name)");
    app->add_option("--edges", o.edges, "edgelist: edge file, 'u v' per line or binary pairs")
        ->type_name("FILE");
    app->add_option("--edge-dtype", edge_dtype_, "edgelist: edge file encoding (default: text)")
        ->type_name("text|int32|int64");
    app->add_option("--features", o.features,
                    "edgelist: features (.npy, text rows, or sparse JSON {\"node\": [feature ids]} when the name "
                    "ends in .json[.gz|.xz])")
        ->type_name("FILE");
    app->add_option("--sparse-features", o.sparse_features,
                    "edgelist: sparse features as 'node feature [value]' lines (stored sparse)")
        ->type_name("FILE");
    app->add_option("--feature-dim", o.feature_dim,
                    "Sparse features: the feature width (default: largest id + 1)")
        ->type_name("INT");
    app->add_option("--feature-layout", o.feature_layout,
                    "Sparse features: stored sparse (CSR, read by the model's input table), dense (features.npy), "
                    "or auto (dense only when no larger; default)")
        ->type_name("auto|sparse|dense");
    app->add_option("--labels", o.labels, "edgelist: labels (.npy or text: 'label', 'id label' or CSV rows)")
        ->type_name("FILE");
    app->add_option("--label-column", o.label_column,
                    "edgelist: label file column of the label, by header name or 0-based index "
                    "(default: the second of two columns)")
        ->type_name("NAME|INDEX");
    app->add_option("--id-column", o.id_column,
                    "edgelist: label file column of the node id (default: the first)")
        ->type_name("NAME|INDEX");
    app->add_flag("--class-names", o.class_names,
                  "edgelist: labels are class names even where they look like integers "
                  "(default: names when the first label is not an integer)");
    CLI::Option* header = app->add_flag("--header", header_,
                                        "edgelist: edge and label files open with a header line "
                                        "(default: detected, and logged)");
    app->add_flag("--no-header", no_header_, "edgelist: no header line: read every line as data")
        ->excludes(header);
    app->add_flag("--allow-empty-edges", o.allow_empty_edges,
                  "Accept an edge file (linqs: a cites file) without edges");
    app->add_flag("--allow-isolated-nodes", o.allow_isolated_nodes,
                  "edgelist: keep nodes that only the label (or string-id feature) file names, as isolated nodes");
    app->add_option("--ids", ids_, "edgelist: node id kind (default: int)")->type_name("int|string");
    app->add_flag("--undirected", o.undirected, "Add v -> u for every u -> v");
    app->add_flag("--keep-self-loops", o.keep_self_loops, "Keep u -> u edges");
    app->add_flag("--keep-duplicates", o.keep_duplicates, "Keep repeated edges");
    app->add_option("--normalize-features", norm_, "Feature normalisation (default: none)")
        ->type_name("none|row");
    app->add_option("--feature-dtype", o.feature_dtype, "Stored feature type (default: f32)")
        ->type_name("f32|f16");
    app->add_option("--split", split_,
                    "Split source (default: auto); criteo/csv: train,val,test fractions of --input by "
                    "line order (default: 0.8,0.1,0.1)")
        ->type_name("auto|file|random|ogb|A,B,C");
    app->add_option("--split-file", o.split_file, "'id<TAB>train|val|test' lines")
        ->type_name("FILE");
    app->add_option("--ogb-split", o.ogb_split, "ogb: folder under split/ (default: the only one)");
    app->add_option("--train-per-class", o.train_per_class,
                    "Random split: training nodes per class (0 = use --train-frac)")
        ->type_name("INT");
    app->add_option("--train-frac", o.train_frac, "Random split: training fraction (default: 0.1)")
        ->type_name("FLOAT");
    app->add_option("--val-frac", o.val_frac, "Random split: validation fraction (default: 0.1)")
        ->type_name("FLOAT");
    app->add_option("--test-frac", o.test_frac, "Random split: test fraction (default: 0.8)")
        ->type_name("FLOAT");
    app->add_option("--seed", o.seed, "Seed of the random split (default: 0)")->type_name("UINT");
    app->add_option("--task", o.task,
                    "Graph formats: link also splits the edges into link-prediction triples (default: node)")
        ->type_name("node|link");
    app->add_option("--edge-split", edge_split_,
                    "--task link: train,val,test fractions of the edges, each edge drawn by --seed "
                    "(default: 0.9,0.05,0.05)")
        ->type_name("A,B,C");
    clicks_.Add(app);
    tool_flags_.Add(app, &o.temp_dir);
  }

  Status Prepare() override {
    if (format_ == "sequences") return PrepareSequences();
    if (!positional_.empty()) {
      return InvalidArgument("a positional INPUT is for --format sequences; other formats take --input");
    }
    if (format_ == "triples") return PrepareTriples();
    if (ClickPreprocessFlags::Handles(format_)) {
      clicks_mode_ = true;
      size_t budget = options_.memory_budget_bytes;
      FS_RETURN_IF_ERROR(tool_flags_.Apply(&budget));
      return clicks_.Prepare(format_, inputs_, split_, options_.output, options_.overwrite, options_.name, budget,
                             options_.temp_dir);
    }
    if (clicks_.AnyGiven()) {
      return InvalidArgument("--train/--val/--test, --hash-buckets, --min-frequency, --columns, --label, "
                             "--dense, --categorical, --drop, --delimiter and --skip-bad-rows are for "
                             "--format criteo|csv");
    }
    if (inputs_.size() > 1) return InvalidArgument("--input takes one folder for --format " + format_);
    if (!inputs_.empty()) options_.input = inputs_[0];
    if (!format_.empty()) {
      auto format = datasets::ParseInputFormat(format_);
      if (!format.ok()) {
        return InvalidArgument("--format: unknown value '" + format_ +
                               "' (expected one of linqs, edgelist, ogb, criteo, csv, triples, sequences)");
      }
      options_.format = *format;
    }
    if (!edge_dtype_.empty()) {
      FS_ASSIGN_OR_RETURN(options_.edge_dtype, datasets::ParseEdgeDType(edge_dtype_));
    }
    if (!ids_.empty()) {
      FS_ASSIGN_OR_RETURN(options_.ids, datasets::ParseIdKind(ids_));
    }
    if (header_) options_.header = datasets::HeaderMode::kPresent;
    if (no_header_) options_.header = datasets::HeaderMode::kAbsent;
    if (!norm_.empty()) {
      FS_ASSIGN_OR_RETURN(options_.normalize_features, datasets::ParseFeatureNorm(norm_));
    }
    if (!split_.empty()) {
      FS_ASSIGN_OR_RETURN(options_.split, datasets::ParseSplitMode(split_));
    }
    if (!edge_split_.empty()) {
      if (options_.task != "link") return InvalidArgument("--edge-split applies to --task link");
      FS_ASSIGN_OR_RETURN(options_.edge_split, ParseNumberList(edge_split_, 3, "--edge-split"));
    }
    return tool_flags_.Apply(&options_.memory_budget_bytes);
  }

  Status Run() override {
    tool_flags_.Activate();
    if (clicks_mode_) return clicks_.Run(options_.seed);
    if (triples_mode_) return RunTriples();
    if (sequences_mode_) return RunSequences();
    datasets::PreprocessReport r;
    FS_RETURN_IF_ERROR(datasets::Preprocess(options_, CpuContext(options_.seed), &r));
    std::printf(
        "wrote %s: %lld nodes, %lld edges (%lld read), %lld features, %lld classes, "
        "train/val/test %lld/%lld/%lld\n",
        options_.output.c_str(), static_cast<long long>(r.num_nodes),
        static_cast<long long>(r.num_edges), static_cast<long long>(r.input_edges),
        static_cast<long long>(r.feature_dim), static_cast<long long>(r.num_classes),
        static_cast<long long>(r.num_train), static_cast<long long>(r.num_val),
        static_cast<long long>(r.num_test));
    if (options_.task == "link") {
      FS_ASSIGN_OR_RETURN(auto lt, storage::LinkTriples::Open(options_.output));
      std::printf("link triples train/val/test %lld/%lld/%lld (%lld nodes only in val/test); the graph keeps the "
                  "training edges\n",
                  static_cast<long long>(lt->layout().num_train), static_cast<long long>(lt->layout().num_val),
                  static_cast<long long>(lt->layout().num_test), static_cast<long long>(lt->layout().unseen_entities));
    }
    return Status::OK();
  }

 private:
  // --format triples takes --train/--val/--test, --output, --overwrite,
  // --name and the dataset tool flags; any graph-format input is refused.
  Status PrepareTriples() {
    triples_mode_ = true;
    datasets::TriplesPreprocessOptions& t = triples_;
    FS_RETURN_IF_ERROR(clicks_.TakeSplitFiles(&t.train, &t.val, &t.test));
    const datasets::PreprocessOptions& o = options_;
    if (!inputs_.empty() || !o.edges.empty() || !o.features.empty() || !o.labels.empty() ||
        !o.sparse_features.empty() || !o.split_file.empty() || !split_.empty() || !edge_split_.empty() ||
        o.task != "node") {
      return InvalidArgument("--format triples reads --train FILE --val FILE --test FILE ('head relation tail' "
                             "lines, already split); --input, --edges, --features, --labels, --task and the split flags "
                             "are for other formats");
    }
    t.output = o.output;
    t.overwrite = o.overwrite;
    t.name = o.name;
    size_t budget = t.memory_budget_bytes;
    FS_RETURN_IF_ERROR(tool_flags_.Apply(&budget));
    t.memory_budget_bytes = budget;
    t.temp_dir = o.temp_dir;
    return Status::OK();
  }

  Status RunTriples() {
    datasets::TriplesPreprocessReport r;
    FS_RETURN_IF_ERROR(datasets::PreprocessTriples(triples_, CpuContext(options_.seed), &r));
    std::printf("wrote %s: %lld entities (%lld only in val/test), %lld relations, train/val/test triples "
                "%lld/%lld/%lld, %lld graph edges\n",
                triples_.output.c_str(), static_cast<long long>(r.num_entities),
                static_cast<long long>(r.unseen_entities), static_cast<long long>(r.num_relations),
                static_cast<long long>(r.num_train), static_cast<long long>(r.num_val),
                static_cast<long long>(r.num_test), static_cast<long long>(r.num_edges));
    return Status::OK();
  }

  // --format sequences takes INPUT (or --input FILE), --output, --overwrite
  // and --name; every other input flag is refused.
  Status PrepareSequences() {
    sequences_mode_ = true;
    const datasets::PreprocessOptions& o = options_;
    if (!positional_.empty() && !inputs_.empty()) {
      return InvalidArgument("--format sequences: give the input once (INPUT or --input FILE)");
    }
    if (inputs_.size() > 1) return InvalidArgument("--format sequences reads one file");
    if (!o.edges.empty() || !o.features.empty() || !o.labels.empty() || !o.sparse_features.empty() ||
        !o.split_file.empty() || !split_.empty() || !edge_split_.empty() || o.task != "node" || clicks_.AnyGiven()) {
      return InvalidArgument("--format sequences reads one file of 'user item' lines (INPUT) and splits it "
                             "leave-one-out itself; the graph, click and split flags are for other formats");
    }
    sequences_.input = !positional_.empty() ? positional_ : (inputs_.empty() ? "" : inputs_[0]);
    sequences_.output = o.output;
    sequences_.overwrite = o.overwrite;
    sequences_.name = o.name;
    return Status::OK();
  }

  Status RunSequences() {
    datasets::SequencesPreprocessReport r;
    FS_RETURN_IF_ERROR(datasets::PreprocessSequences(sequences_, &r));
    std::printf("wrote %s: %lld users (%lld evaluated: the rest have fewer than 3 actions), %lld items, %lld "
                "actions; leave-one-out split (last action test, second-to-last validation)\n",
                sequences_.output.c_str(), static_cast<long long>(r.num_users), static_cast<long long>(r.eval_users),
                static_cast<long long>(r.num_items), static_cast<long long>(r.num_actions));
    return Status::OK();
  }

  datasets::SequencesPreprocessOptions sequences_;
  bool sequences_mode_ = false;
  std::string positional_;
  datasets::TriplesPreprocessOptions triples_;
  bool triples_mode_ = false;
  datasets::PreprocessOptions options_;
  std::string format_, edge_dtype_, ids_, norm_, split_, edge_split_;
  bool header_ = false, no_header_ = false;
  std::vector<std::string> inputs_;
  ClickPreprocessFlags clicks_;
  bool clicks_mode_ = false;
  DatasetToolFlags tool_flags_;
};

}  // namespace

std::unique_ptr<Command> AddPreprocessCommand(CLI::App* root) {
  CLI::App* app =
      root->add_subcommand("preprocess", "Convert raw graph files, click logs or user action sequences into a foresight dataset");
  return std::make_unique<PreprocessCommand>(app);
}

}  // namespace foresight::apps
