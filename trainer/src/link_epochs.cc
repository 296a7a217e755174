// RunLinkEpochs and the metrics file of link prediction (link_epochs.h).
#include "link_epochs.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "foresight/core/stopwatch.h"

namespace foresight::trainer::internal {

nlohmann::json RankMetricsJson(const char* prefix, const RankMetrics& m) {
  const std::string p = prefix;
  return {{p + "mrr", m.mrr}, {p + "hits1", m.hits1}, {p + "hits3", m.hits3}, {p + "hits10", m.hits10}};
}

StatusOr<std::unique_ptr<LinkMetricsFile>> LinkMetricsFile::Create(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return IoError("open metrics file " + path + ": " + std::strerror(errno));
  return std::unique_ptr<LinkMetricsFile>(new LinkMetricsFile(path, f));
}

LinkMetricsFile::~LinkMetricsFile() { std::fclose(f_); }

Status LinkMetricsFile::Write(const nlohmann::json& j) {
  const std::string line = j.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0) {
    return IoError("write metrics file " + path_ + ": " + std::strerror(errno));
  }
  return Status::OK();
}

Status RunLinkEpochs(const TrainOptions& o, const storage::LinkTriples& lt, LinkModel& model,
                     const TrainCallbacks& callbacks, TrainSummary* out) {
  std::unique_ptr<LinkMetricsFile> metrics;
  if (!o.metrics_file.empty()) {
    FS_ASSIGN_OR_RETURN(metrics, LinkMetricsFile::Create(o.metrics_file));
  }
  *out = TrainSummary();
  double best_val = -1.0;
  RankMetrics best_test;
  int since_best = 0;
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    Stopwatch watch;
    double loss = 0.0;
    int64_t hits = 0, misses = 0;
    FS_RETURN_IF_ERROR(model.TrainEpoch(epoch, callbacks, &loss, &hits, &misses));
    const double train_seconds = watch.Lap();
    nlohmann::json line = {{"epoch", epoch + 1},
                           {"loss", loss},
                           {"epoch_seconds", train_seconds},
                           {"triples_per_second", static_cast<double>(lt.train().size(0)) / train_seconds},
                           {"cache_hits", hits},
                           {"cache_misses", misses}};
    EpochMetrics em;
    em.epoch = epoch + 1;
    em.loss = loss;
    em.epoch_seconds = train_seconds;
    const bool evaluate = (epoch + 1) % o.eval_epochs == 0 || epoch + 1 == o.epochs;
    if (evaluate) {
      RankMetrics val, test;
      FS_RETURN_IF_ERROR(model.BeginEvaluation());
      FS_RETURN_IF_ERROR(model.Evaluate(lt.val(), &val, 0));
      FS_RETURN_IF_ERROR(model.Evaluate(lt.test(), &test, 1));
      const double eval_seconds = watch.Lap();
      line.update(RankMetricsJson("val_", val));
      line.update(RankMetricsJson("test_", test));
      line["eval_seconds"] = eval_seconds;
      em.eval_seconds = eval_seconds;
      if (val.mrr > best_val) {  // ties keep the first epoch
        best_val = val.mrr;
        best_test = test;
        out->best_epoch = epoch + 1;
        since_best = 0;
      } else {
        ++since_best;
      }
      if (o.progress) {
        std::fprintf(stderr, "epoch %d/%d  loss %.4f  val_mrr %.4f  test_mrr %.4f  test_hits10 %.4f  (%.1f s + eval %.1f s)\n",
                     epoch + 1, o.epochs, loss, val.mrr, test.mrr, test.hits10, train_seconds, eval_seconds);
      }
    } else if (o.progress) {
      std::fprintf(stderr, "epoch %d/%d  loss %.4f  (%.1f s)\n", epoch + 1, o.epochs, loss, train_seconds);
    }
    if (metrics) FS_RETURN_IF_ERROR(metrics->Write(line));
    out->history.push_back(em);
    out->epochs_completed = epoch + 1;
    if (callbacks.on_epoch) callbacks.on_epoch(em);
    if (o.patience > 0 && evaluate && since_best >= o.patience) {
      out->stopped_early = true;
      break;
    }
  }
  out->best_val_mrr = best_val < 0 ? 0.0 : best_val;
  out->test_mrr = best_test.mrr;
  out->test_hits10 = best_test.hits10;
  if (metrics) {
    FS_RETURN_IF_ERROR(metrics->Write({{"final", true},
                                       {"best_epoch", out->best_epoch},
                                       {"val_mrr", out->best_val_mrr},
                                       {"test_mrr", best_test.mrr},
                                       {"test_hits1", best_test.hits1},
                                       {"test_hits3", best_test.hits3},
                                       {"test_hits10", best_test.hits10},
                                       {"epochs", out->epochs_completed},
                                       {"stopped_early", out->stopped_early}}));
  }
  if (!o.export_dir.empty()) FS_RETURN_IF_ERROR(model.Export(o.export_dir));
  return Status::OK();
}

}  // namespace foresight::trainer::internal
