// External (field, value) counting and vocabulary building (click_vocab.h).
#include "click_vocab.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <queue>

namespace foresight::datasets::internal {
namespace {

// Bytes one hash-map entry costs beyond its key (node, bucket, count,
// std::string header): an estimate that errs high.
constexpr size_t kEntryOverhead = 80;
constexpr size_t kKeptOverhead = 64;  // kept value: vector slot + map entry
constexpr int64_t kMaxFields = 65535;

std::string TempBase(const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && *t != '\0' ? t : "/tmp";
}

int64_t FieldOf(const std::string& key) {
  return (static_cast<int64_t>(static_cast<uint8_t>(key[0])) << 8) | static_cast<uint8_t>(key[1]);
}

// One spilled run being merged: its next (key, count).
struct RunCursor {
  FILE* f = nullptr;
  std::string key;
  int64_t count = 0;
  // False at the end of the run; a short record is DataLoss.
  StatusOr<bool> Next() {
    uint32_t len = 0;
    const size_t got = std::fread(&len, 1, sizeof(len), f);
    if (got == 0 && std::feof(f)) return false;
    key.resize(len);
    if (got != sizeof(len) || std::fread(key.data(), 1, len, f) != len ||
        std::fread(&count, 1, sizeof(count), f) != sizeof(count)) {
      return DataLoss("value-count run in a temporary file is short (disk error?)");
    }
    return true;
  }
};

}  // namespace

ClickVocabulary::ClickVocabulary(int64_t num_fields, int64_t min_frequency, size_t memory_budget_bytes,
                                 std::string temp_dir)
    : num_fields_(num_fields),
      min_frequency_(std::max<int64_t>(1, min_frequency)),
      budget_(memory_budget_bytes),
      temp_dir_(std::move(temp_dir)),
      kept_(static_cast<size_t>(num_fields)),
      values_(static_cast<size_t>(num_fields)),
      rows_(static_cast<size_t>(num_fields)) {}

ClickVocabulary::~ClickVocabulary() {
  for (FILE* f : runs_) std::fclose(f);
}

Status ClickVocabulary::Add(int64_t field, std::string_view value) {
  if (field < 0 || field >= num_fields_ || num_fields_ > kMaxFields) {
    return Internal("ClickVocabulary::Add: field " + std::to_string(field) + " out of range");
  }
  key_.assign(1, static_cast<char>(field >> 8));
  key_.push_back(static_cast<char>(field & 0xff));
  key_.append(value.data(), value.size());
  auto [it, inserted] = counts_.try_emplace(key_, 0);
  ++it->second;
  if (inserted) {
    counts_bytes_ += key_.size() + kEntryOverhead;
    if (counts_bytes_ > budget_ / 2) FS_RETURN_IF_ERROR(Spill());
  }
  return Status::OK();
}

Status ClickVocabulary::Spill() {
  std::vector<const std::pair<const std::string, int64_t>*> entries;
  entries.reserve(counts_.size());
  for (const auto& e : counts_) entries.push_back(&e);
  std::sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
  std::string path = TempBase(temp_dir_) + "/foresight-clickcounts-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return ErrnoError("mkstemp(" + path + ")", errno);
  unlink(path.c_str());  // the open file keeps it; nothing survives a crash
  FILE* f = fdopen(fd, "w+b");
  if (f == nullptr) {
    const int err = errno;
    close(fd);
    return ErrnoError("fdopen(value-count run " + path + ")", err);
  }
  runs_.push_back(f);
  for (const auto* e : entries) {
    const uint32_t len = static_cast<uint32_t>(e->first.size());
    if (std::fwrite(&len, sizeof(len), 1, f) != 1 || std::fwrite(e->first.data(), 1, len, f) != len ||
        std::fwrite(&e->second, sizeof(e->second), 1, f) != 1) {
      return ErrnoError("write(value-count run in " + TempBase(temp_dir_) + ")", errno);
    }
  }
  if (std::fflush(f) != 0) return ErrnoError("write(value-count run in " + TempBase(temp_dir_) + ")", errno);
  counts_.clear();
  counts_.rehash(0);
  counts_bytes_ = 0;
  return Status::OK();
}

Status ClickVocabulary::Keep(const std::string& key, int64_t count) {
  if (count < min_frequency_) return Status::OK();
  const size_t field = static_cast<size_t>(FieldOf(key));
  kept_[field].emplace_back(key.substr(2), count);
  kept_bytes_ += key.size() + kKeptOverhead;
  if (kept_bytes_ > budget_) {
    return ResourceExhausted("the categorical values seen at least --min-frequency " + std::to_string(min_frequency_) +
                             " times need more than the --memory-budget of " + std::to_string(budget_) +
                             " bytes to map ids; raise --min-frequency or --memory-budget, or use --hash-buckets");
  }
  return Status::OK();
}

Status ClickVocabulary::Finish() {
  if (runs_.empty()) {
    for (const auto& [key, count] : counts_) FS_RETURN_IF_ERROR(Keep(key, count));
  } else {
    if (!counts_.empty()) FS_RETURN_IF_ERROR(Spill());
    // k-way merge by key; equal keys (one per run at most) sum their counts.
    std::vector<RunCursor> cursors(runs_.size());
    auto greater = [&](size_t a, size_t b) { return cursors[a].key > cursors[b].key; };
    std::priority_queue<size_t, std::vector<size_t>, decltype(greater)> heap(greater);
    for (size_t r = 0; r < runs_.size(); ++r) {
      cursors[r].f = runs_[r];
      if (std::fseek(runs_[r], 0, SEEK_SET) != 0) return ErrnoError("seek(value-count run)", errno);
      FS_ASSIGN_OR_RETURN(bool more, cursors[r].Next());
      if (more) heap.push(r);
    }
    std::string key;
    int64_t count = 0;
    bool have = false;
    while (!heap.empty()) {
      const size_t r = heap.top();
      heap.pop();
      if (have && cursors[r].key == key) {
        count += cursors[r].count;
      } else {
        if (have) FS_RETURN_IF_ERROR(Keep(key, count));
        key = cursors[r].key;
        count = cursors[r].count;
        have = true;
      }
      FS_ASSIGN_OR_RETURN(bool more, cursors[r].Next());
      if (more) heap.push(r);
    }
    if (have) FS_RETURN_IF_ERROR(Keep(key, count));
  }
  counts_.clear();
  counts_.rehash(0);
  for (size_t k = 0; k < kept_.size(); ++k) {
    auto& kept = kept_[k];
    // Hot values first: cache- and partition-friendly row order.
    std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    values_[k].reserve(kept.size());
    for (auto& e : kept) values_[k].push_back(std::move(e.first));
    kept.clear();
    kept.shrink_to_fit();
    rows_[k].reserve(values_[k].size());
    for (size_t i = 0; i < values_[k].size(); ++i) rows_[k].emplace(values_[k][i], static_cast<int64_t>(i) + 1);
  }
  return Status::OK();
}

int64_t ClickVocabulary::Row(int64_t field, std::string_view value) const {
  if (value.empty()) return 0;
  const auto& m = rows_[static_cast<size_t>(field)];
  auto it = m.find(value);
  return it == m.end() ? 0 : it->second;
}

}  // namespace foresight::datasets::internal
