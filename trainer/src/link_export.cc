// ExportLinkEmbeddings and TableReader (link_export.h).
#include "link_export.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <vector>

#include "foresight/storage/dataset.h"
#include "foresight/storage/npy.h"

namespace foresight::trainer::internal {

EmbeddingReader TableReader(embed::EmbeddingTable* table, int64_t dim) {
  return [table, dim](const std::vector<int64_t>& keys, float* out) -> Status {
    const int64_t width = table->layout().row_width();
    std::vector<float> rows(keys.size() * static_cast<size_t>(width));
    FS_RETURN_IF_ERROR(table->ReadRows(keys, rows.data()));
    for (size_t i = 0; i < keys.size(); ++i) {
      std::memcpy(out + static_cast<int64_t>(i) * dim, rows.data() + static_cast<int64_t>(i) * width,
                  sizeof(float) * dim);
    }
    return Status::OK();
  };
}

Status ExportLinkEmbeddings(const TrainOptions& o, const storage::LinkTriples& lt, const EmbeddingReader& entities,
                            const EmbeddingReader& relations, int64_t relation_rows, bool write,
                            const std::string& dir) {
  if (write) std::filesystem::create_directories(dir);
  const int64_t d = o.embedding_dim;
  const std::pair<const EmbeddingReader*, std::string> tables[] = {{&entities, "entity_embeddings.npy"},
                                                                   {&relations, "relation_embeddings.npy"}};
  for (const auto& [read, file] : tables) {
    const int64_t rows = read == &entities ? lt.num_entities() : relation_rows;
    std::unique_ptr<storage::NpyWriter> w;
    if (write) {
      FS_ASSIGN_OR_RETURN(w, storage::NpyWriter::Create(dir + "/" + file, DType::kF32, {d}));
    }
    constexpr int64_t kBlock = 65536;
    std::vector<float> emb;
    for (int64_t b = 0; b < rows; b += kBlock) {
      const int64_t n = std::min(kBlock, rows - b);
      std::vector<int64_t> keys(static_cast<size_t>(n));
      std::iota(keys.begin(), keys.end(), b);
      emb.resize(static_cast<size_t>(n * d));
      FS_RETURN_IF_ERROR((*read)(keys, emb.data()));
      if (write) FS_RETURN_IF_ERROR(w->Append(emb.data(), n));
    }
    if (write) FS_RETURN_IF_ERROR(w->Finish());
  }
  if (!write) return Status::OK();
  // Names: the dataset's original entity ids and relation names.
  FS_ASSIGN_OR_RETURN(auto ds, storage::Dataset::Open(o.dataset, /*validate_ids=*/false));
  if (ds->original_ids().defined()) {
    const Tensor& ids = ds->original_ids();
    if (ids.dtype() == DType::kU8) {
      FS_RETURN_IF_ERROR(storage::SaveNpyBytes(dir + "/entity_ids.npy", ids));
    } else {
      FS_RETURN_IF_ERROR(storage::SaveNpy(dir + "/entity_ids.npy", ids));
    }
  } else {
    // Written in blocks: no array of every entity.
    FS_ASSIGN_OR_RETURN(auto w, storage::NpyWriter::Create(dir + "/entity_ids.npy", DType::kI64, {}));
    std::vector<int64_t> block;
    for (int64_t b = 0; b < lt.num_entities(); b += 65536) {
      block.resize(static_cast<size_t>(std::min<int64_t>(65536, lt.num_entities() - b)));
      std::iota(block.begin(), block.end(), b);
      FS_RETURN_IF_ERROR(w->Append(block.data(), static_cast<int64_t>(block.size())));
    }
    FS_RETURN_IF_ERROR(w->Finish());
  }
  if (lt.relation_names().defined()) {
    FS_RETURN_IF_ERROR(storage::SaveNpyBytes(dir + "/relation_names.npy", lt.relation_names()));
  }
  return Status::OK();
}

}  // namespace foresight::trainer::internal
