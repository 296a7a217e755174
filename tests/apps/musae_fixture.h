// Small graphs in the layout of the MUSAE datasets (Rozemberczki et al.,
// "Multi-scale attributed node embedding"), written from the formats' public
// descriptions with planted structure so a model has something to learn:
//
// Facebook-style (musae_facebook_*): an edge CSV "id_1,id_2" with a header,
// a target CSV "id,facebook_id,page_name,page_type" (page_type one of four
// class names; some page names hold quoted commas), and sparse features as
// a JSON object {"0": [feature ids], ...}. Classes are communities (most
// edges stay inside a class) and each node carries a few ids of its class's
// feature block among shared noise ids.
//
// GitHub-style (musae_git_*): "id_1,id_2" edges and a target CSV
// "id,name,ml_target" (0/1, about 30% ones), no features. Class 1 nodes draw
// four times as many edges as class 0 nodes, and most edges stay inside a
// class: degree and neighbourhood both predict the class.
#pragma once

#include <string>
#include <vector>

namespace foresight::testing {

enum class MusaeStyle { kFacebook, kGitHub };

struct MusaeFixture {
  // The files in the MUSAE layout (features empty for GitHub).
  std::string edges_csv, target_csv, features_json;
  // The `foresight preprocess` flags that read this fixture (without
  // --output), and the class of every node (for the majority baseline).
  std::string preprocess_flags;
  std::vector<int> labels;
  int num_classes = 0;
  // Share of the most frequent class among all nodes.
  double MajorityShare() const;
};

// Writes the fixture of `style` into `dir` (deterministic). The only place
// that knows the layout: until `preprocess` reads CSV headers and names a
// label column (--label-column), it also writes the same graph in the form
// today's parser takes (headerless edges, "id class-index" labels) and the
// flags point at those; the switch is kPreprocessReadsMusaeLayout in the
// .cc.
MusaeFixture WriteMusaeFixture(const std::string& dir, MusaeStyle style);

}  // namespace foresight::testing
