// Scratch rows for layer-wise inference's hidden layers: an f32 [rows,
// width] RowStore held in RAM when the caller's budget allows, else in a
// buffered-I/O file (page cache, reclaimable by the kernel, not this
// process's RSS) that is removed when the ScratchRows goes away, on error
// paths too. Private to the trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/storage/row_store.h"

namespace foresight::trainer::internal {

// The RAM that layer-wise inference may give its hidden layers when the
// caller sets no budget. A hidden layer is written once and read once, by
// the next layer, so keeping it in a page-cache file costs a copy per row
// read, not disk traffic (it is deleted before the kernel writes it back);
// in RAM it is anonymous memory that raises the process's peak RSS for the
// rest of the run. 256 MiB keeps every small and medium graph's layers in
// RAM (e.g. 260k nodes x 256 f32 hidden units), while a 1M-node graph's
// [1M, 256] layer (1 GiB) goes to the scratch file instead of doubling a
// training run's peak RSS between epochs.
constexpr int64_t kDefaultInferenceBudgetBytes = int64_t{256} << 20;

// What layer-wise inference may hold in RAM and where the rest goes.
struct InferenceMemory {
  // Bytes of RAM for the hidden layers held at once (a layer's input and
  // output). A hidden layer that does not fit beside the ones still held
  // goes to a scratch file. Chunk buffers (one chunk's block and rows,
  // bounded by the chunk size) are not counted. 0 = every hidden layer on
  // disk. Default: kDefaultInferenceBudgetBytes
  int64_t budget_bytes = kDefaultInferenceBudgetBytes;
  // Directory of the scratch files. Default: "" = $TMPDIR, else /tmp
  std::string scratch_dir;
};

class ScratchRows {
 public:
  // f32 [rows, width]: in RAM (a zero-filled tensor) when `in_ram`, else a
  // new file in `dir` ("" = $TMPDIR or /tmp) read and written with buffered
  // I/O. Errors name the file.
  static StatusOr<std::unique_ptr<ScratchRows>> Create(int64_t rows, int64_t width, bool in_ram,
                                                       const std::string& dir);
  // A file's name is removed as soon as the store has it open; the space is
  // freed when the store closes (here, or at the process's exit).
  ~ScratchRows();
  ScratchRows(const ScratchRows&) = delete;
  ScratchRows& operator=(const ScratchRows&) = delete;

  storage::RowStore& store() { return *store_; }
  bool in_ram() const { return path_.empty(); }
  int64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }  // "" when in RAM (the name may be gone)
  // The rows themselves when in RAM (shared with the store), else undefined.
  const Tensor& tensor() const { return rows_; }

 private:
  ScratchRows() = default;

  std::unique_ptr<storage::RowStore> store_;
  Tensor rows_;
  std::string path_;
  bool path_removed_ = false;  // unlinked while the store keeps it open
  int64_t bytes_ = 0;
};

// The scratch directory `dir` names: itself, else $TMPDIR, else /tmp.
std::string ScratchDirectory(const std::string& dir);

}  // namespace foresight::trainer::internal
