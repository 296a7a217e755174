#include "dlrm_schedule.h"

#include <algorithm>

#include "click_batch.h"

namespace foresight::trainer::internal {

DlrmSchedule::DlrmSchedule(const sampler::SeedOrder* order, storage::RowRange val, storage::RowRange test,
                           int64_t eval_batch_size, int64_t eval_every, int first_epoch, int end_epoch)
    : order_(order),
      val_(val),
      test_(test),
      eval_batch_size_(eval_batch_size),
      eval_every_(eval_every),
      next_epoch_(first_epoch),
      end_epoch_(end_epoch) {}

bool DlrmSchedule::Next(ScheduledItem* out) {
  if (items_.empty() && next_epoch_ < end_epoch_) FillEpoch(next_epoch_++);
  if (items_.empty()) return false;
  *out = std::move(items_.front());
  items_.pop_front();
  return true;
}

void DlrmSchedule::AddEvaluation(int epoch, int64_t step, bool epoch_end) {
  const storage::RowRange splits[2] = {val_, test_};
  for (int split = 0; split < 2; ++split) {
    for (int64_t begin = splits[split].begin; begin < splits[split].end; begin += eval_batch_size_) {
      ScheduledItem item;
      item.kind = ScheduledItem::Kind::kEval;
      item.epoch = epoch;
      item.step = step;
      item.split = split;
      item.rows = RowRangeIds(begin, std::min(begin + eval_batch_size_, splits[split].end));
      items_.push_back(std::move(item));
    }
  }
  ScheduledItem report;
  report.kind = ScheduledItem::Kind::kReport;
  report.epoch = epoch;
  report.step = step;
  report.epoch_end = epoch_end;
  items_.push_back(std::move(report));
}

void DlrmSchedule::FillEpoch(int epoch) {
  const int64_t batches = order_->num_batches();
  for (int64_t b = 0; b < batches; ++b) {
    ScheduledItem item;
    item.kind = ScheduledItem::Kind::kTrain;
    item.epoch = epoch;
    item.batch = b;
    item.step = static_cast<int64_t>(epoch) * batches + b + 1;
    item.rows = order_->Batch(epoch, b);
    items_.push_back(std::move(item));
    const bool last = b + 1 == batches;
    if (!last && eval_every_ > 0 && item.step % eval_every_ == 0) AddEvaluation(epoch, item.step, false);
  }
  AddEvaluation(epoch, static_cast<int64_t>(epoch + 1) * batches, true);
}

}  // namespace foresight::trainer::internal
