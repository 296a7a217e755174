// The link-prediction triples of a graph dataset (manifest "link"): the
// input of `foresight train --task link`. Entities are the graph's nodes
// (ids 0..N-1, their input names in original_ids.npy); the graph's edges are
// the training triples' head -> tail pairs. Arrays:
//   link_train.npy      i64 [M, 3]  (head, relation, tail) rows
//   link_val.npy        i64 [Mv, 3]
//   link_test.npy       i64 [Mt, 3]
//   relation_names.npy  |S<w> [R]   optional: the input's relation names
// Manifest "link" (LinkLayout::ToJson): num_relations, triple counts, and
// how many entities appear only in validation / test triples (kept: they
// are ranked like any other entity, with their initial embedding).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/storage/dataset.h"

namespace foresight::storage {

inline constexpr char kLinkTrainArray[] = "link_train";
inline constexpr char kLinkValArray[] = "link_val";
inline constexpr char kLinkTestArray[] = "link_test";
inline constexpr char kRelationNamesArray[] = "relation_names";

// What manifest "link" says.
struct LinkLayout {
  int64_t num_relations = 0;
  int64_t num_train = 0, num_val = 0, num_test = 0;
  // Entities named by no training triple (only by validation / test ones).
  int64_t unseen_entities = 0;

  nlohmann::json ToJson() const;
};
// Parses manifest "link"; errors name `origin` and the field.
Status ParseLinkLayout(const nlohmann::json& j, const std::string& origin, LinkLayout* out);

// A validated, read-only set of triples; arrays are mmap'd. Thread-safe
// after Open (immutable).
class LinkTriples {
 public:
  // Opens the triples of the graph dataset at `dir` (its manifest must have
  // "link"; FailedPrecondition otherwise, and for a staging directory) and
  // checks every array's dtype and shape against the layout, and every
  // head and tail in [0, num_nodes), relation in [0, num_relations);
  // errors name the file and the first bad row.
  static StatusOr<std::unique_ptr<LinkTriples>> Open(const std::string& dir);

  const LinkLayout& layout() const { return layout_; }
  int64_t num_entities() const { return num_entities_; }
  int64_t num_relations() const { return layout_.num_relations; }
  const Tensor& train() const { return train_; }  // i64 [M, 3]
  const Tensor& val() const { return val_; }
  const Tensor& test() const { return test_; }
  // u8 [R, w] (numpy |S<w>), undefined when absent.
  const Tensor& relation_names() const { return relation_names_; }
  const DatasetManifest& manifest() const { return manifest_; }

 private:
  friend class DatasetWriter;  // validates its staging dir before the commit
  LinkTriples() = default;
  static StatusOr<std::unique_ptr<LinkTriples>> OpenDir(const std::string& dir);
  DatasetManifest manifest_;
  LinkLayout layout_;
  int64_t num_entities_ = 0;
  Tensor train_, val_, test_, relation_names_;
};

}  // namespace foresight::storage
