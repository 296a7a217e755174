// The order in which DLRM training touches batches: each epoch's shuffled
// training batches, with an evaluation (the validation batches, then the
// test batches, in row order) after every eval_every-th step and at the end
// of each epoch. The whole run is one stream, so the embedding tables'
// lookahead window sees the ids of the next W batches whatever they are
// for, across evaluations and epoch ends. A pure function of its arguments:
// a resumed run starting at epoch k gets the stream's tail from there.
// Private to the trainer.
#pragma once

#include <cstdint>
#include <deque>

#include "foresight/core/tensor.h"
#include "foresight/sampler/seed_order.h"
#include "foresight/storage/clicks_dataset.h"

namespace foresight::trainer::internal {

struct ScheduledItem {
  enum class Kind {
    kTrain,   // a training step on `rows`
    kEval,    // a forward-only batch of split `split` (0 val, 1 test)
    kReport,  // the evaluation since the last report is complete (no rows)
  };
  Kind kind = Kind::kTrain;
  int epoch = 0;       // counted from 0
  int64_t batch = 0;   // kTrain: the batch within its epoch
  int64_t step = 0;    // training steps done after this item (a kTrain's own counts)
  int split = 0;       // kEval
  bool epoch_end = false;  // kReport: the end-of-epoch evaluation
  Tensor rows;         // i64 dataset rows (kTrain, kEval)
};

class DlrmSchedule {
 public:
  // `order` outlives the schedule; epochs [first_epoch, end_epoch).
  DlrmSchedule(const sampler::SeedOrder* order, storage::RowRange val, storage::RowRange test,
               int64_t eval_batch_size, int64_t eval_every, int first_epoch, int end_epoch);
  // The next item; false at the end of the run.
  bool Next(ScheduledItem* out);
  int64_t steps_per_epoch() const { return order_->num_batches(); }

 private:
  void FillEpoch(int epoch);
  void AddEvaluation(int epoch, int64_t step, bool epoch_end);

  const sampler::SeedOrder* order_;
  storage::RowRange val_, test_;
  int64_t eval_batch_size_, eval_every_;
  int next_epoch_, end_epoch_;
  std::deque<ScheduledItem> items_;
};

}  // namespace foresight::trainer::internal
