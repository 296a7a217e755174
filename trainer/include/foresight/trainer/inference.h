// Using a trained model: accuracies of a checkpoint on a dataset's splits,
// and export of node embeddings and predictions as .npy files. Both rebuild
// the model from the checkpoint's stored configuration and run layer-wise
// full-neighbour inference (no dropout).
#pragma once

#include <cstdint>
#include <string>

#include "foresight/core/status.h"

namespace foresight::trainer {

struct InferenceOptions {
  // Dataset directory; node count and feature width must match the
  // checkpoint's model. Required.
  std::string dataset;
  // A directory written by Train with a checkpoint_dir. Required.
  std::string checkpoint_dir;
  // Use the parameters of the best epoch (the one whose test accuracy Train
  // reported); false uses the last completed epoch. Default: true
  bool use_best = true;
  // CPU threads; 0 = online CPUs. Default: 0
  int threads = 0;
  // Destination nodes per chunk in layer-wise inference. Default: 4096
  int64_t eval_batch_size = 4096;
  // RAM that layer-wise inference may give the hidden layers it holds at
  // once; a layer that does not fit goes to a scratch file (buffered I/O,
  // removed afterwards). Export keeps the last hidden layer (the
  // embeddings) in RAM regardless. Default: 256 MiB
  int64_t hidden_memory_bytes = int64_t{256} << 20;
  // Directory of those scratch files. Default: "" = $TMPDIR, else /tmp
  std::string scratch_dir;
  // Export only: also write logits.npy (f32 [N, C]). Default: false
  bool write_logits = false;
  // Export only: also write probabilities.npy (softmax, f32 [N, C]).
  // Default: false
  bool write_probabilities = false;

  Status Validate() const;
};

struct EvaluationResult {
  int epoch = 0;  // the checkpoint's epoch that was evaluated
  double train_acc = 0, val_acc = 0, test_acc = 0;
  int64_t train_count = 0, val_count = 0, test_count = 0;  // labelled ids scored
};

// Accuracy of the checkpoint on the train, validation and test ids.
Status Evaluate(const InferenceOptions& options, EvaluationResult* out);

// Writes into output_dir (created if absent; files replaced atomically):
// embeddings.npy   f32 [N, D]: the input of the output layer (the last hidden
//                  layer's representation; the features for a 1-layer model),
// predictions.npy  i64 [N]: argmax of the logits (first max wins),
// class_names.json ["name of class 0", ...] when the dataset's labels were
//                  class names (manifest "class_names"),
// learned_features.npy  f32 [N, DIM]: the learned node features (the
//                  input rows) of a model trained with learned:DIM,
// logits.npy / probabilities.npy when asked, and
// original_ids.npy always, so row i maps back to the input's id of node i
// (the dataset's original_ids.npy, or i64 0..N-1 when ids were kept).
Status Export(const InferenceOptions& options, const std::string& output_dir);

}  // namespace foresight::trainer
