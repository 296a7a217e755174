// RunLinkEpochs (link_epochs.h): the one epoch loop of every link model.
#include "link_epochs.h"

#include <cstdio>

#include "foresight/core/logging.h"
#include "foresight/core/stopwatch.h"
#include "checkpoint_lock.h"
#include "metrics_writer.h"

namespace foresight::trainer::internal {

nlohmann::json RankMetricsJson(const char* prefix, const RankMetrics& m) {
  const std::string p = prefix;
  return {{p + "mrr", m.mrr}, {p + "hits1", m.hits1}, {p + "hits3", m.hits3}, {p + "hits10", m.hits10}};
}

namespace {

LinkRankValues RankValues(const RankMetrics& m) { return {m.mrr, m.hits1, m.hits3, m.hits10}; }

// The final line (no timings, so a resumed run writes the same text).
std::string LinkFinalLine(const LinkCheckpointState& p, int epochs) {
  return nlohmann::json({{"final", true},
                         {"best_epoch", p.best_epoch},
                         {"val_mrr", p.best_val_mrr < 0 ? 0.0 : p.best_val_mrr},
                         {"test_mrr", p.best_test.mrr},
                         {"test_hits1", p.best_test.hits1},
                         {"test_hits3", p.best_test.hits3},
                         {"test_hits10", p.best_test.hits10},
                         {"epochs", epochs},
                         {"stopped_early", p.stopped_early}})
      .dump();
}

}  // namespace

Status LinkModel::Restore(const std::string&, const LinkCheckpointState&) {
  return Unimplemented("checkpoint: this link model does not read link checkpoints");
}

Status LinkModel::Save(const std::string&, LinkCheckpointState*) {
  return Unimplemented("checkpoint: this link model does not write link checkpoints");
}

Status RunLinkEpochs(const TrainOptions& o, const storage::LinkTriples& lt, LinkModel& model,
                     const TrainCallbacks& callbacks, TrainSummary* out, Communicator* comm) {
  const bool writer = comm == nullptr || comm->rank() == 0;
  const bool progress = o.progress && writer;
  // The checkpoint directory is this run's until it returns; what killed
  // runs left half written in it goes first.
  std::unique_ptr<CheckpointDirLock> lock;
  if (!o.checkpoint_dir.empty()) {
    FS_RETURN_IF_ERROR(OpenCheckpointDir(o.checkpoint_dir, writer, comm, RemoveLinkCheckpointLeftovers, &lock));
  }
  // Progress of the run: what a checkpoint keeps besides the rows.
  LinkCheckpointState p;
  p.options = LinkOptionsToJson(o);
  p.options_hash = LinkOptionsHash(o);
  bool resumed = false;
  if (o.resume) {
    StatusOr<LinkCheckpointState> saved = ReadLinkCheckpointState(o.checkpoint_dir);
    if (!saved.ok() && saved.status().code() == StatusCode::kNotFound) {
      FS_LOG(INFO) << "resume: no complete checkpoint in " << o.checkpoint_dir << " yet; starting from epoch 1";
    } else {
      FS_RETURN_IF_ERROR(saved.status());
      if (saved->options_hash != p.options_hash) {
        return FailedPrecondition("resume: the checkpoint in " + o.checkpoint_dir +
                                  " was written with different training options (" + saved->options.dump() +
                                  ") than this run's (" + p.options.dump() +
                                  "); only epochs, threads, paths and the table store and cache options may change");
      }
      FS_RETURN_IF_ERROR(model.Restore(o.checkpoint_dir, *saved));
      const nlohmann::json options = p.options;
      p = std::move(saved).value();
      p.options = options;  // the new epochs are what later saves record
      resumed = true;
      if (progress && p.epoch < o.epochs && !p.stopped_early) {
        std::fprintf(stderr, "resuming from epoch %d of %d: %d done in %s\n", p.epoch + 1, o.epochs, p.epoch,
                     o.checkpoint_dir.c_str());
      }
    }
  }
  // With checkpoints, each metrics line is made durable before its epoch's
  // checkpoint commits (see MetricsWriter).
  std::unique_ptr<MetricsWriter> metrics;
  if (!o.metrics_file.empty() && writer) {
    const bool durable = !o.checkpoint_dir.empty();
    if (resumed) {
      FS_ASSIGN_OR_RETURN(metrics, MetricsWriter::Resume(o.metrics_file, p.epoch, durable));
    } else {
      FS_ASSIGN_OR_RETURN(metrics, MetricsWriter::Create(o.metrics_file, durable));
    }
  }

  *out = TrainSummary();
  for (int epoch = p.epoch; epoch < o.epochs && !p.stopped_early; ++epoch) {
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
      if (val.mrr > p.best_val_mrr) {  // ties keep the first epoch
        p.best_val_mrr = val.mrr;
        p.best_test = RankValues(test);
        p.best_epoch = epoch + 1;
        p.since_best = 0;
      } else {
        ++p.since_best;
      }
      if (progress) {
        std::fprintf(stderr, "epoch %d/%d  loss %.4f  val_mrr %.4f  test_mrr %.4f  test_hits10 %.4f  (%.1f s + eval %.1f s)\n",
                     epoch + 1, o.epochs, loss, val.mrr, test.mrr, test.hits10, train_seconds, eval_seconds);
      }
    } else if (progress) {
      std::fprintf(stderr, "epoch %d/%d  loss %.4f  (%.1f s)\n", epoch + 1, o.epochs, loss, train_seconds);
    }
    p.epoch = epoch + 1;
    p.stopped_early = o.patience > 0 && evaluate && p.since_best >= o.patience;
    // The line first, then the checkpoint (the order MetricsWriter relies on).
    if (metrics) FS_RETURN_IF_ERROR(metrics->WriteLine(line, /*ends_epoch=*/true));
    if (!o.checkpoint_dir.empty()) FS_RETURN_IF_ERROR(model.Save(o.checkpoint_dir, &p));
    out->history.push_back(em);
    if (callbacks.on_epoch) callbacks.on_epoch(em);
  }
  if (resumed && out->history.empty()) {
    FS_LOG(INFO) << "resume: the run in " << o.checkpoint_dir << " has finished (" << p.epoch
                 << " epochs); nothing to train";
  }
  out->epochs_completed = p.epoch;
  out->stopped_early = p.stopped_early;
  out->best_epoch = p.best_epoch;
  out->best_val_mrr = p.best_val_mrr < 0 ? 0.0 : p.best_val_mrr;
  out->test_mrr = p.best_test.mrr;
  out->test_hits10 = p.best_test.hits10;
  if (metrics) FS_RETURN_IF_ERROR(metrics->WriteFinalText(LinkFinalLine(p, p.epoch)));
  if (!o.export_dir.empty()) FS_RETURN_IF_ERROR(model.Export(o.export_dir));
  return Status::OK();
}

}  // namespace foresight::trainer::internal
