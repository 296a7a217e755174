#include "musae_fixture.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <sstream>
#include <utility>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight::testing {
namespace {

// Flip to true once preprocess reads the MUSAE layout as published (CSV
// header detection and --label-column with class names, issue 18 item 2);
// the flags below then take the MUSAE files themselves.
constexpr bool kPreprocessReadsMusaeLayout = true;

constexpr const char* kPageTypes[] = {"politician", "government", "tvshow", "company"};

// A uniform draw in [0, n) from the 32-bit Mersenne twister (whose output is
// fixed by the standard, unlike the distributions').
int Draw(std::mt19937& rng, int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); }

struct Graph {
  std::vector<int> labels;
  std::set<std::pair<int, int>> edges;  // u < v
};

// `edges_of_class[c]` partners per node of class c, `same` of them (in
// percent) inside the node's class.
Graph Plant(std::mt19937& rng, const std::vector<int>& class_percent, const std::vector<int>& edges_of_class,
            int n, int same) {
  Graph g;
  std::vector<std::vector<int>> members(class_percent.size());
  for (int v = 0; v < n; ++v) {
    int r = Draw(rng, 100), c = 0;
    while (r >= class_percent[c]) r -= class_percent[c++];
    g.labels.push_back(c);
    members[c].push_back(v);
  }
  const int classes = static_cast<int>(class_percent.size());
  for (int v = 0; v < n; ++v) {
    const int c = g.labels[v];
    for (int k = 0; k < edges_of_class[c]; ++k) {
      int d = c;
      if (Draw(rng, 100) >= same) d = (c + 1 + Draw(rng, classes - 1)) % classes;
      const int u = members[d][Draw(rng, static_cast<int>(members[d].size()))];
      if (u != v) g.edges.insert({std::min(u, v), std::max(u, v)});
    }
  }
  return g;
}

std::string EdgeLines(const Graph& g) {
  std::ostringstream out;
  for (const auto& [u, v] : g.edges) out << u << ',' << v << '\n';
  return out.str();
}

// "id class" lines: what the parser takes before --label-column.
std::string IdClassLines(const Graph& g) {
  std::ostringstream out;
  for (size_t v = 0; v < g.labels.size(); ++v) out << v << ' ' << g.labels[v] << '\n';
  return out.str();
}

}  // namespace

double MusaeFixture::MajorityShare() const {
  std::vector<int> count(static_cast<size_t>(num_classes), 0);
  for (int c : labels) ++count[static_cast<size_t>(c)];
  return static_cast<double>(*std::max_element(count.begin(), count.end())) / static_cast<double>(labels.size());
}

MusaeFixture WriteMusaeFixture(const std::string& dir, MusaeStyle style) {
  MusaeFixture f;
  std::mt19937 rng(style == MusaeStyle::kFacebook ? 2018 : 2019);
  std::ostringstream target;
  Graph g;
  std::string prefix;
  if (style == MusaeStyle::kFacebook) {
    prefix = dir + "/musae_facebook_";
    g = Plant(rng, {40, 25, 20, 15}, {4, 4, 4, 4}, 500, 80);
    f.num_classes = 4;
    target << "id,facebook_id,page_name,page_type\n";
    // Features: ids 100c..100c+29 belong to class c, 1000..1199 are noise,
    // and the largest id used stays below the published dimension (4714),
    // which --feature-dim gives.
    std::ostringstream json;
    json << "{";
    for (size_t v = 0; v < g.labels.size(); ++v) {
      const int c = g.labels[v];
      target << v << ',' << 100000 + 7 * v << ',';
      if (v % 7 == 0) {
        target << "\"Page " << v << ", Official\"";  // a quoted comma (RFC 4180)
      } else {
        target << "Page " << v;
      }
      target << ',' << kPageTypes[c] << '\n';
      std::set<int> ids;
      for (int k = 0; k < 2; ++k) ids.insert(100 * c + Draw(rng, 30));
      for (int k = 0; k < 4; ++k) ids.insert(1000 + Draw(rng, 200));
      json << (v ? ", " : "") << '"' << v << "\": [";
      bool first = true;
      for (int id : ids) {
        json << (first ? "" : ", ") << id;
        first = false;
      }
      json << "]";
    }
    json << "}\n";
    f.features_json = prefix + "features.json";
    WriteFile(f.features_json, json.str());
  } else {
    prefix = dir + "/musae_git_";
    g = Plant(rng, {70, 30}, {2, 8}, 600, 85);
    f.num_classes = 2;
    target << "id,name,ml_target\n";
    for (size_t v = 0; v < g.labels.size(); ++v) target << v << ",dev" << v << ',' << g.labels[v] << '\n';
  }
  f.labels = g.labels;
  f.edges_csv = prefix + "edges.csv";
  f.target_csv = prefix + "target.csv";
  WriteFile(f.edges_csv, "id_1,id_2\n" + EdgeLines(g));
  WriteFile(f.target_csv, target.str());

  std::string edges = f.edges_csv, labels = f.target_csv, label_flags;
  if (kPreprocessReadsMusaeLayout) {
    label_flags = style == MusaeStyle::kFacebook ? " --label-column page_type" : " --label-column ml_target";
  } else {
    edges = prefix + "edges.plain.csv";
    labels = prefix + "target.plain.txt";
    WriteFile(edges, EdgeLines(g));
    WriteFile(labels, IdClassLines(g));
  }
  f.preprocess_flags = "preprocess --edges " + Quote(edges) + " --labels " + Quote(labels) + label_flags +
                       " --undirected --train-frac 0.3 --val-frac 0.2 --test-frac 0.5 --threads 2";
  if (!f.features_json.empty()) f.preprocess_flags += " --features " + Quote(f.features_json) + " --feature-dim 4714";
  return f;
}

}  // namespace foresight::testing
