// `foresight generate graph`: a synthetic node-classification dataset of any
// size, streamed to disk in bounded memory, whose bytes are a function of
// the options (seed included) only, whatever the thread count.
//
// The model (all draws are Philox streams keyed by the seed and the edge or
// node index, so chunks generate in parallel in any order):
//  * Nodes 0..N-1; node v has class v mod C (balanced classes; with
//    communities, see below).
//  * Edge e: an R-MAT draw (a, b, c, d = 1-a-b-c) over 2^ceil(log2 N)
//    (redrawn while either end is >= N) gives (s', d'); both ends go through
//    a seeded pseudo-random permutation of [0, N) (a Feistel network with
//    cycle walking), so high-degree nodes are spread over the id range and
//    over the classes. With probability p_in the destination is then
//    replaced by a node of the source's class: an R-MAT column draw over the
//    class's members, permuted within the class. Edges point s -> d; the
//    CSR (by destination) lists in-neighbours, which are mostly same-class.
//  * Communities (--communities K > 0, a planted partition): node v is in
//    community k(v) = P(v) mod K for a seeded permutation P of [0, N), so a
//    community's members are scattered over the id range (partitioning has
//    to find them). Its class is k(v) mod C (classes tied to communities;
//    K >= C). With probability p_in an edge's destination is a member of
//    its source's community (an R-MAT column draw over the members,
//    permuted within the community) instead of a node of its class; the
//    rest keep their R-MAT destination. So about p_in + (1 - p_in) / K of
//    the edges lie inside a community, and communities are dense blocks of
//    about N / K nodes that a partitioner and a node order can exploit.
//  * Features: x_v = z_v + m_{class(v)}, z ~ N(0, 1) per entry and m_c a
//    random class mean with entries N(0, 1) * feature_signal / sqrt(F)
//    (||m_c|| ~ feature_signal): features alone separate classes only
//    weakly; averaging neighbours (same class w.p. ~p_in) sharpens them.
//  * Labels: the class of every node. Split: node v goes to train / val /
//    test by a uniform draw against the fractions (sizes are close to, not
//    exactly, the fractions); ids are written in increasing order.
//  * Edges go through graph::CsrBuilder: multi-edges are kept by default
//    (the benchmark graph keeps them), self loops dropped by default.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/status.h"

namespace foresight::datasets {

struct GenerateGraphOptions {
  // --output OUT: dataset directory to create. Default: "" (required).
  std::string output;
  // --overwrite: replace an existing dataset at OUT. Default: false.
  bool overwrite = false;
  // --name: manifest "name". Default: "rmat-planted".
  std::string name = "rmat-planted";
  // --nodes. Default: 1,000,000.
  int64_t num_nodes = 1000000;
  // --edges: edges drawn (before self-loop / duplicate removal). Default: 20,000,000.
  int64_t num_edges = 20000000;
  // --features: feature dimension F. Default: 128.
  int64_t feature_dim = 128;
  // --classes. Default: 16.
  int64_t num_classes = 16;
  // --seed. Default: 0.
  uint64_t seed = 0;
  // --rmat-a / --rmat-b / --rmat-c: R-MAT quadrant probabilities (d is the
  // rest; all must be >= 0 with a + b + c <= 1). Default: 0.57, 0.19, 0.19.
  double rmat_a = 0.57;
  double rmat_b = 0.19;
  double rmat_c = 0.19;
  // --p-in: probability that an edge stays inside its source's class (its
  // community, with communities). Default: 0.7.
  double p_in = 0.7;
  // --communities K: a planted partition of K communities, classes tied to
  // them (see above); 0 = none, classes alone. Default: 0.
  int64_t num_communities = 0;
  // --feature-signal: norm of the class mean added to N(0, I) features. Default: 1.0.
  double feature_signal = 1.0;
  // --train-frac / --val-frac / --test-frac (sum <= 1; the rest is in no
  // split). Default: 0.1, 0.1, 0.8.
  double train_frac = 0.1;
  double val_frac = 0.1;
  double test_frac = 0.8;
  // --keep-multi-edges: keep repeated (u, v) edges. Default: true.
  bool keep_multi_edges = true;
  // --keep-self-loops. Default: false.
  bool keep_self_loops = false;
  // --undirected: add v -> u for every u -> v. Default: false.
  bool undirected = false;
  // --feature-dtype: "f32" or "f16". Default: "f32".
  std::string feature_dtype = "f32";
  // --task: "node", or "link": the edges are also split into
  // link-prediction triples (train / val / test by edge_split, each edge
  // drawn by the seed, as `preprocess --task link` does), the graph keeps
  // the training edges, and every one of the nodes is an entity (isolated
  // ones too). The split holds the edges in RAM (about 60 bytes an edge and
  // 20 a node), beside memory_budget_bytes. Default: "node".
  std::string task = "node";
  // --edge-split (task link): train, val, test fractions. Default: 0.9, 0.05, 0.05.
  std::vector<double> edge_split = {0.9, 0.05, 0.05};
  // --memory-budget for the edge sort. Default: 1 GiB.
  size_t memory_budget_bytes = size_t{1} << 30;
  // --temp-dir for spilled edge runs. Default: "" = $TMPDIR or /tmp.
  std::string temp_dir;
};

struct GenerateGraphReport {
  int64_t num_nodes = 0;
  int64_t num_edges = 0;  // written, after self-loop / duplicate removal
  int64_t self_loops_dropped = 0;
  int64_t duplicates_dropped = 0;
  int64_t num_train = 0, num_val = 0, num_test = 0;
  // Edges drawn whose two ends share a community (communities only; before
  // self-loop / duplicate removal).
  int64_t intra_community_edges = 0;
};

// The community of `node` in a dataset generated with `options`
// (options.num_communities > 0; the seed and node count decide it).
int64_t GeneratedCommunity(const GenerateGraphOptions& options, int64_t node);

// Generates the dataset into options.output over ctx.pool. Same options ->
// identical files. On error nothing is left at options.output.
Status GenerateGraph(const GenerateGraphOptions& options, const ExecContext& ctx,
                     GenerateGraphReport* report = nullptr);

}  // namespace foresight::datasets
