#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "foresight/datasets/line_reader.h"
#include "foresight/datasets/sequences.h"
#include "foresight/datasets/tokenizer.h"
#include "foresight/storage/sequences_dataset.h"
#include "preprocess_internal.h"

namespace foresight::datasets {

namespace {

// The input as read: one entry per action, users in file order.
struct Actions {
  std::vector<int64_t> user_ids;  // one per user
  std::vector<int64_t> offsets{0};
  std::vector<int64_t> items;     // original item ids
};

Status ReadActions(const std::string& path, Actions* out) {
  FS_ASSIGN_OR_RETURN(auto reader, LineReader::Open(path));
  // Where each user's lines started, to name them when they come back.
  std::unordered_map<int64_t, int64_t> first_line;
  std::vector<std::string_view> fields;
  std::string_view line;
  int64_t current = 0;
  bool any = false;
  while (reader->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    SplitFields(line, Delimiter::kWhitespace, &fields);
    if (fields.size() != 2) {
      return reader->Error("expected 'user item' (two integer ids separated by a space or tab), got " +
                           std::to_string(fields.size()) + " field" + (fields.size() == 1 ? "" : "s"));
    }
    int64_t user = 0, item = 0;
    if (!ParseInt64(fields[0], &user)) return reader->Error("expected an integer user id, got " + Quote(fields[0]));
    if (!ParseInt64(fields[1], &item)) return reader->Error("expected an integer item id, got " + Quote(fields[1]));
    if (!any || user != current) {
      auto [it, fresh] = first_line.emplace(user, reader->line_number());
      if (!fresh) {
        return reader->Error("expected the lines of each user together (in time order), but user " +
                             std::to_string(user) + " already had lines from line " + std::to_string(it->second) +
                             " until another user's");
      }
      if (any) out->offsets.push_back(static_cast<int64_t>(out->items.size()));
      out->user_ids.push_back(user);
      current = user;
      any = true;
    }
    out->items.push_back(item);
  }
  FS_RETURN_IF_ERROR(reader->status());
  if (!any) return InvalidArgument(path + ": no 'user item' lines (an empty input)");
  out->offsets.push_back(static_cast<int64_t>(out->items.size()));
  return Status::OK();
}

Tensor I64(const std::vector<int64_t>& v) {
  Tensor t = Tensor::Empty({static_cast<int64_t>(v.size())}, DType::kI64);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

}  // namespace

Status PreprocessSequences(const SequencesPreprocessOptions& o, SequencesPreprocessReport* report) {
  if (o.input.empty()) return InvalidArgument("preprocess --format sequences: give the input file (INPUT)");
  if (o.output.empty()) return InvalidArgument("preprocess: --output is required");
  FS_RETURN_IF_ERROR(internal::CheckInputFile(o.input, "INPUT"));
  Actions a;
  FS_RETURN_IF_ERROR(ReadActions(o.input, &a));

  // Items 1..I by ascending original id (0 stays free: no item).
  std::vector<int64_t> ids = a.items;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const int64_t n = static_cast<int64_t>(a.items.size());
  const int64_t num_users = static_cast<int64_t>(a.user_ids.size());
  const int64_t num_items = static_cast<int64_t>(ids.size());
  Tensor items = Tensor::Empty({n}, DType::kI32);
  int32_t* it = items.data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    it[i] = static_cast<int32_t>(std::lower_bound(ids.begin(), ids.end(), a.items[i]) - ids.begin() + 1);
  }
  Tensor valid = Tensor::Zeros({num_users}, DType::kI32), test = Tensor::Zeros({num_users}, DType::kI32);
  int64_t eval_users = 0;
  for (int64_t u = 0; u < num_users; ++u) {
    const int64_t end = a.offsets[u + 1];
    if (end - a.offsets[u] < storage::kMinEvalActions) continue;
    valid.data<int32_t>()[u] = it[end - 2];
    test.data<int32_t>()[u] = it[end - 1];
    ++eval_users;
  }
  std::vector<int64_t> item_ids{-1};
  item_ids.insert(item_ids.end(), ids.begin(), ids.end());

  FS_ASSIGN_OR_RETURN(auto writer, storage::DatasetWriter::Create(o.output, o.overwrite));
  FS_RETURN_IF_ERROR(writer->WriteArray("items.npy", items));
  FS_RETURN_IF_ERROR(writer->WriteArray("offsets.npy", I64(a.offsets)));
  FS_RETURN_IF_ERROR(writer->WriteArray("valid.npy", valid));
  FS_RETURN_IF_ERROR(writer->WriteArray("test.npy", test));
  FS_RETURN_IF_ERROR(writer->WriteArray("user_ids.npy", I64(a.user_ids)));
  FS_RETURN_IF_ERROR(writer->WriteArray("item_ids.npy", I64(item_ids)));
  storage::DatasetManifest& m = writer->manifest();
  m.kind = storage::kKindSequences;
  m.name = o.name.empty() ? internal::BaseName(o.input) : o.name;
  m.sequences = {{"num_users", num_users},
                 {"num_items", num_items},
                 {"num_actions", n},
                 {"eval_users", eval_users},
                 {"split", "leave-one-out: last action test, second-to-last validation; users with fewer than " +
                               std::to_string(storage::kMinEvalActions) + " actions train only"}};
  m.source = {{"format", "sequences"}, {"input", o.input}};
  FS_RETURN_IF_ERROR(writer->Commit());
  if (report != nullptr) {
    report->num_users = num_users;
    report->num_items = num_items;
    report->num_actions = n;
    report->eval_users = eval_users;
  }
  return Status::OK();
}

}  // namespace foresight::datasets
