// Export of a link model's embeddings (private to the trainer), and the
// reader of a table's embeddings that export and evaluation read through.
#pragma once

#include <cstdint>
#include <string>

#include "foresight/core/status.h"
#include "foresight/embed/embedding_table.h"
#include "foresight/storage/link_triples.h"
#include "foresight/trainer/train_options.h"
#include "link_eval.h"

namespace foresight::trainer::internal {

// Reads the first `dim` floats (the embedding) of rows `keys` of `table`.
EmbeddingReader TableReader(embed::EmbeddingTable* table, int64_t dim);

// Writes dir/entity_embeddings.npy [entities, dim] and
// relation_embeddings.npy [relation_rows, dim] read through the readers in
// blocks (no table is read whole), entity_ids.npy (the dataset's original
// ids, or 0..n-1) and relation_names.npy when the triples have names. The
// readers are called in the same order whether or not `write`: on several
// ranks every rank reads (a collective read) and rank 0 alone writes.
Status ExportLinkEmbeddings(const TrainOptions& o, const storage::LinkTriples& lt, const EmbeddingReader& entities,
                            const EmbeddingReader& relations, int64_t relation_rows, bool write,
                            const std::string& dir);

}  // namespace foresight::trainer::internal
