// `foresight preprocess --format triples` (datasets/triples.h): reads the
// three split files, interns entity and relation names, streams the triples
// into link_*.npy and the training pairs into the graph builder, then
// writes the node arrays a graph dataset needs and commits.
#include "foresight/datasets/triples.h"

#include <string_view>
#include <vector>

#include "foresight/core/logging.h"
#include "foresight/datasets/line_reader.h"
#include "foresight/datasets/tokenizer.h"
#include "foresight/graph/csr_builder.h"
#include "foresight/storage/dataset.h"
#include "foresight/storage/link_triples.h"
#include "preprocess_internal.h"

namespace foresight::datasets {
namespace {

using internal::StringIds;

constexpr int64_t kBlockTriples = int64_t{1} << 16;  // triples per npy append

struct Split {
  const char* flag;   // "--train"
  const char* array;  // storage::kLinkTrainArray
  const std::string* path;
};

// Reads one split file into `out` (an i64 [*, 3] array writer); training
// triples also go to `builder` and define the relations.
Status ReadSplit(const Split& split, bool training, StringIds* entities, StringIds* relations,
                 graph::CsrBuilder* builder, storage::NpyWriter* out, int64_t* count) {
  FS_ASSIGN_OR_RETURN(auto reader, LineReader::Open(*split.path));
  std::vector<std::string_view> fields;
  std::vector<int64_t> block;
  block.reserve(static_cast<size_t>(3 * kBlockTriples));
  std::string_view line;
  *count = 0;
  while (reader->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    SplitFields(line, Delimiter::kWhitespace, &fields);
    if (fields.size() != 3) {
      return reader->Error("expected 3 fields (head relation tail), got " + std::to_string(fields.size()));
    }
    int64_t rel = relations->Find(fields[1]);
    if (rel < 0) {
      if (!training) {
        return reader->Error("relation " + Quote(fields[1]) + " appears in no training triple (" +
                             std::string(split.flag) + " may only use the relations of --train)");
      }
      rel = relations->Intern(fields[1]);
    }
    const int64_t head = entities->Intern(fields[0]);
    const int64_t tail = entities->Intern(fields[2]);
    if (training) FS_RETURN_IF_ERROR(builder->Add(head, tail));
    block.insert(block.end(), {head, rel, tail});
    ++*count;
    if (static_cast<int64_t>(block.size()) == 3 * kBlockTriples) {
      FS_RETURN_IF_ERROR(out->Append(block.data(), kBlockTriples));
      block.clear();
    }
  }
  FS_RETURN_IF_ERROR(reader->status());
  if (*count == 0) {
    return InvalidArgument(*split.path + ": no triples (" + split.flag +
                           " needs at least one 'head relation tail' line)");
  }
  FS_RETURN_IF_ERROR(out->Append(block.data(), static_cast<int64_t>(block.size() / 3)));
  return out->Finish();
}

Status WriteEmptyArray(storage::DatasetWriter* w, const char* file) {
  FS_ASSIGN_OR_RETURN(auto out, w->OpenArray(file, DType::kI64, {}));
  return out->Finish();
}

std::string ParentName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return internal::BaseName(path);
  return internal::BaseName(path.substr(0, slash));
}

}  // namespace

Status PreprocessTriples(const TriplesPreprocessOptions& o, const ExecContext& ctx,
                         TriplesPreprocessReport* report) {
  if (o.output.empty()) return InvalidArgument("preprocess: --output is required");
  const Split splits[] = {{"--train", storage::kLinkTrainArray, &o.train},
                          {"--val", storage::kLinkValArray, &o.val},
                          {"--test", storage::kLinkTestArray, &o.test}};
  for (const Split& s : splits) {
    if (s.path->empty()) {
      return InvalidArgument(std::string("--format triples needs --train FILE --val FILE --test FILE (") + s.flag +
                             " is missing)");
    }
    FS_RETURN_IF_ERROR(internal::CheckInputFile(*s.path, s.flag));
  }
  FS_ASSIGN_OR_RETURN(auto writer, storage::DatasetWriter::Create(o.output, o.overwrite));
  graph::CsrBuildOptions bo;
  bo.memory_budget_bytes = o.memory_budget_bytes;
  bo.temp_dir = o.temp_dir;
  bo.pool = ctx.pool ? ctx.pool : DefaultThreadPool();
  FS_ASSIGN_OR_RETURN(auto builder, graph::CsrBuilder::Create(bo));

  StringIds entities, relations;
  int64_t counts[3] = {0, 0, 0};
  int64_t entities_after_train = 0;
  for (int k = 0; k < 3; ++k) {
    FS_ASSIGN_OR_RETURN(auto out, writer->OpenArray(std::string(splits[k].array) + ".npy", DType::kI64, {3}));
    FS_RETURN_IF_ERROR(
        ReadSplit(splits[k], k == 0, &entities, &relations, builder.get(), out.get(), &counts[k]));
    if (k == 0) entities_after_train = entities.size();
  }
  const int64_t n = entities.size();
  const int64_t unseen = n - entities_after_train;
  if (unseen > 0) {
    FS_LOG(WARNING) << unseen << " entities appear only in validation or test triples (kept; they are ranked "
                    << "with their initial embedding)";
  }

  FS_RETURN_IF_ERROR(builder->Finish(n, writer->StagingPath(storage::kIndptrFile),
                                     writer->StagingPath(storage::kIndicesFile)));
  FS_RETURN_IF_ERROR(entities.Write(writer->StagingPath(storage::kOriginalIdsFile)));
  FS_RETURN_IF_ERROR(relations.Write(writer->StagingPath(std::string(storage::kRelationNamesArray) + ".npy")));
  {
    // A graph dataset's node arrays: no features ([N, 0]), no labels, no
    // node splits (link prediction splits triples instead).
    FS_ASSIGN_OR_RETURN(auto features, internal::FeatureSink::Create(writer->StagingPath(storage::kFeaturesFile), 0,
                                                                      DType::kF32, FeatureNorm::kNone, bo.pool));
    std::vector<float> none(1);
    for (int64_t i = 0; i < n; ++i) FS_RETURN_IF_ERROR(features->AppendRow(none.data()));
    FS_RETURN_IF_ERROR(features->Finish());
    FS_ASSIGN_OR_RETURN(auto labels, writer->OpenArray(storage::kLabelsFile, DType::kI32, {}));
    const std::vector<int32_t> unlabelled(static_cast<size_t>(n), -1);
    FS_RETURN_IF_ERROR(labels->Append(unlabelled.data(), n));
    FS_RETURN_IF_ERROR(labels->Finish());
    for (const char* f : {storage::kTrainIdsFile, storage::kValIdsFile, storage::kTestIdsFile}) {
      FS_RETURN_IF_ERROR(WriteEmptyArray(writer.get(), f));
    }
  }

  storage::LinkLayout layout;
  layout.num_relations = relations.size();
  layout.num_train = counts[0];
  layout.num_val = counts[1];
  layout.num_test = counts[2];
  layout.unseen_entities = unseen;
  const graph::CsrBuildStats& st = builder->stats();
  storage::DatasetManifest& m = writer->manifest();
  m.name = !o.name.empty() ? o.name : ParentName(o.train);
  m.num_nodes = n;
  m.num_edges = st.num_edges;
  m.feature_dim = 0;
  m.num_classes = 0;
  m.id_map = storage::IdMap::kString;
  m.link = layout.ToJson();
  m.source = {{"tool", "foresight preprocess"},
              {"format", "triples"},
              {"train", o.train},
              {"val", o.val},
              {"test", o.test},
              {"counts", {{"entities", n}, {"relations", relations.size()}, {"edges", st.num_edges}}}};
  // Paths and names are raw bytes; the manifest must be UTF-8.
  m.source = nlohmann::json::parse(m.source.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  m.name = nlohmann::json::parse(nlohmann::json(m.name).dump(-1, ' ', false,
                                                             nlohmann::json::error_handler_t::replace))
               .get<std::string>();
  FS_RETURN_IF_ERROR(writer->Commit());
  if (report != nullptr) {
    report->num_entities = n;
    report->num_relations = relations.size();
    report->num_train = counts[0];
    report->num_val = counts[1];
    report->num_test = counts[2];
    report->num_edges = st.num_edges;
    report->unseen_entities = unseen;
  }
  return Status::OK();
}

}  // namespace foresight::datasets
