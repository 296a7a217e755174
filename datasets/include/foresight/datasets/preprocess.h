// `foresight preprocess`: turns raw graph data (LINQS citation files, edge
// lists, OGB node-property folders) into the on-disk dataset format
// (storage/dataset.h): CSR by destination, features, labels, splits and
// original ids, with provenance in manifest "source". Inputs may be plain,
// .gz or .xz. Edges go through graph::CsrBuilder, so the edge list never has
// to fit in RAM; every parse error names the file, the line and the reason,
// and a failed run leaves no output directory, nor the parents it made
// (DatasetWriter staging).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/status.h"

namespace foresight::datasets {

enum class InputFormat { kLinqs, kEdgeList, kOgb };
enum class EdgeDType { kText, kInt32, kInt64 };  // binary: little-endian (src, dst) pairs
enum class IdKind { kInt, kString };
enum class FeatureNorm { kNone, kRow };
enum class SplitMode { kAuto, kFile, kRandom, kOgb };
// Whether text edge / label files open with a header line (column names).
enum class HeaderMode { kAuto, kPresent, kAbsent };

// Flag spellings: "linqs" | "edgelist" | "ogb"; "text" | "int32" | "int64";
// "int" | "string"; "none" | "row"; "auto" | "file" | "random" | "ogb".
StatusOr<InputFormat> ParseInputFormat(const std::string& s);
StatusOr<EdgeDType> ParseEdgeDType(const std::string& s);
StatusOr<IdKind> ParseIdKind(const std::string& s);
StatusOr<FeatureNorm> ParseFeatureNorm(const std::string& s);
StatusOr<SplitMode> ParseSplitMode(const std::string& s);

struct PreprocessOptions {
  // --format. Default: kEdgeList.
  InputFormat format = InputFormat::kEdgeList;
  // --input DIR: the folder for linqs (exactly one *.content and one *.cites,
  // optionally compressed: name.content.xz) and ogb (raw/, split/).
  // Default: "" (required for linqs / ogb).
  std::string input;
  // --output OUT: the dataset directory to create. Default: "" (required).
  std::string output;
  // --overwrite: replace an existing dataset at OUT. Default: false.
  bool overwrite = false;
  // --name: manifest "name". Default: "" = the input folder's / edge file's base name.
  std::string name;

  // edgelist only. --edges FILE: "u v" per line (whitespace, CSV or TSV;
  // '#'/'%' comments), or binary pairs with --edge-dtype. Default: "".
  std::string edges;
  // --edge-dtype. Default: kText.
  EdgeDType edge_dtype = EdgeDType::kText;
  // --features F: .npy ([N, F] f32/f16/i32/i64/u8) or CSV/TSV/whitespace rows
  // (with --ids string, the first column of each row is the node id).
  // Default: "" (no features: feature_dim 0).
  std::string features;
  // --features F.json (also .json.gz / .json.xz, recognised by the name):
  // sparse features as a JSON object {"node": [feature ids], ...} (the MUSAE
  // layout), each listed id a 1; written as the sparse CSR arrays
  // (storage/dataset.h), never as a dense N x F matrix.
  // --sparse-features S: sparse features as COO text, "node feature [value]"
  // per line (value 1 when absent); exclusive with --features. Default: "".
  std::string sparse_features;
  // --feature-dim D: the sparse feature width when the largest id + 1 is not
  // it (ids must be below D). 0 = largest id + 1. Sparse inputs only. Default: 0.
  int64_t feature_dim = 0;
  // --feature-layout for sparse inputs: "sparse" (the CSR arrays, read by
  // the model's input table), "dense" (features.npy [N, feature_dim], for
  // the store, cache and partition options or a plain first layer; N x F
  // x 4 bytes) or "auto" (dense only when that is no larger than the CSR
  // arrays, i.e. at least half the entries are set). Default: "auto".
  std::string feature_layout = "auto";
  // --labels L: .npy (i32/i64 [N]) or text, one label per line or
  // "id label" per line; -1 = unlabelled. Text files may have more columns
  // (see label_column / id_column), CSV quoting (RFC 4180) and class names
  // instead of ids. Default: "" (all unlabelled).
  std::string labels;
  // --label-column NAME|INDEX: the label file's column holding the label,
  // by header name or 0-based index (a NAME needs a header line). Default:
  // "" = the only column of a 1-column file (one label per row, no ids) or
  // the second of a 2-column file; required for wider files.
  std::string label_column;
  // --id-column NAME|INDEX: the label file's column holding the node id.
  // Default: "" = the first column (none in a 1-column file).
  std::string id_column;
  // --class-names: read labels as class names even when they look like
  // integers. Without it, labels are names when the first one is not an
  // integer. Names become class ids 0..C-1 in sorted (byte) order, stored
  // in the manifest's "class_names"; an empty name means unlabelled.
  // Default: false.
  bool class_names = false;
  // --header / --no-header: whether the text edge and label files open
  // with a header line. kAuto skips a first line whose ids (or integer
  // labels) are not integers; with string ids, where any token may be an
  // id, only a first line of non-integers above integer ids, one naming a
  // --label-column / --id-column, or one of conventional column names
  // (id, id_1, node, source, target, label, class...) is a header. Each
  // decision is logged with the line. Default: kAuto.
  HeaderMode header = HeaderMode::kAuto;
  // --allow-empty-edges: accept an edge file (or a linqs *.cites file)
  // without edges; nodes then come only from features / labels / content.
  // Default: false (refused with the file).
  bool allow_empty_edges = false;
  // --allow-isolated-nodes: accept label (or string-id feature) rows for
  // nodes no edge names (int ids: above the largest id an edge names),
  // keeping them as isolated nodes. Default: false (refused with the file
  // and the line). Per-row label / feature files
  // (no id column) define the node count and may always leave nodes
  // without edges.
  bool allow_isolated_nodes = false;
  // --ids: kInt (ids are row numbers; N = rows of features/labels if given,
  // else max id + 1; nodes without edges are kept) or kString (tokens are
  // relabelled in first-appearance order: edges, then labels, then
  // features; original ids stored). Default: kInt.
  IdKind ids = IdKind::kInt;

  // --undirected: add v -> u for every u -> v. Default: false.
  bool undirected = false;
  // --keep-self-loops. Default: false.
  bool keep_self_loops = false;
  // --keep-duplicates. Default: false.
  bool keep_duplicates = false;
  // --normalize-features: kRow divides each row by its sum (rows summing to
  // 0 stay 0), the GCN/GAT preprocessing. Default: kNone.
  FeatureNorm normalize_features = FeatureNorm::kNone;
  // --feature-dtype: "f32" or "f16". Default: "f32".
  std::string feature_dtype = "f32";

  // --split: kAuto = the split file when given, else ogb's split folder for
  // ogb, else random. Default: kAuto.
  SplitMode split = SplitMode::kAuto;
  // --split-file S: "id<TAB>train|val|test" lines ('#' lines skipped, extra
  // columns ignored). Ids are the original tokens for linqs / string ids,
  // row numbers for int ids. Default: "".
  std::string split_file;
  // --ogb-split NAME: folder under split/. Default: "" = the only one there.
  std::string ogb_split;
  // Random split over the labelled nodes (all nodes when there are no
  // labels). --train-per-class K > 0: K per class for train (Planetoid
  // style); otherwise --train-frac of the nodes. --val-frac / --test-frac:
  // fractions of all eligible nodes, taken from those not in train.
  // Defaults: 0, 0.1, 0.1, 0.8.
  int64_t train_per_class = 0;
  double train_frac = 0.1;
  double val_frac = 0.1;
  double test_frac = 0.8;
  // --seed for the random split. Default: 0.
  uint64_t seed = 0;

  // --memory-budget for the edge sort (graph::CsrBuildOptions). Default: 1 GiB.
  size_t memory_budget_bytes = size_t{1} << 30;
  // --temp-dir for spilled edge runs. Default: "" = $TMPDIR or /tmp.
  std::string temp_dir;

  // --task link: also split the edges into link-prediction triples
  // (storage/link_triples.h, one relation "edge"): each edge (with
  // --undirected, each node pair once) goes to train / val / test with the
  // probabilities of edge_split, drawn from (seed, pair); the graph keeps
  // only the training edges, so message passing never sees a validation or
  // test edge. Default: "node" (no triples).
  std::string task = "node";
  // --edge-split A,B,C: train / val / test fractions summing to 1.
  // Default: 0.9, 0.05, 0.05.
  std::vector<double> edge_split = {0.9, 0.05, 0.05};
};

// What a run produced (also recorded in manifest "source").
struct PreprocessReport {
  int64_t num_nodes = 0;
  int64_t num_edges = 0;          // after symmetrising / dedup
  int64_t input_edges = 0;        // edges read from the input
  int64_t dropped_missing = 0;    // linqs: cites naming papers absent from content
  int64_t self_loops_dropped = 0;
  int64_t duplicates_dropped = 0;
  int64_t spilled_runs = 0;       // sorted edge runs written to --temp-dir
  int64_t feature_dim = 0;
  // --feature-layout for sparse inputs: "sparse" (the CSR arrays, read by
  // the model's input table), "dense" (features.npy [N, feature_dim], for
  // the store, cache and partition options or a plain first layer; N x F
  // x 4 bytes) or "auto" (dense only when that is no larger than the CSR
  // arrays, i.e. at least half the entries are set). Default: "auto".
  std::string feature_layout = "auto";
  int64_t num_classes = 0;
  int64_t num_train = 0, num_val = 0, num_test = 0;
  std::vector<std::string> warnings;  // also logged
};

// Runs the preprocessing described by `options`, threaded over ctx.pool.
// On error nothing is left at options.output. `report` may be null.
Status Preprocess(const PreprocessOptions& options, const ExecContext& ctx,
                  PreprocessReport* report = nullptr);

}  // namespace foresight::datasets
