// DLRM whose tables are 4x --memory-budget trains from the disk store with
// the process's peak RSS within the budget + 10% (issue 12's out-of-core
// must-show). The run happens in a forked child, so the peak measured
// (getrusage's, which never drops) is that run's; the child reports it
// through a pipe. The planner's index is sized to the window: an index of
// 24 bytes a row (the flat array) would not leave the budget any cache.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "foresight/core/process_memory.h"
#include "foresight/core/thread_pool.h"
#include "foresight/datasets/clicks.h"
#include "foresight/kernels/ops.h"
#include "foresight/trainer/trainer.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

struct ChildResult {
  bool ok = false;
  std::string error;
  int64_t peak_rss = 0;
  int64_t baseline_rss = 0;
};

// Runs `o` in a child process.
ChildResult TrainInChild(const TrainOptions& o) {
  int fds[2];
  if (::pipe(fds) != 0) return {false, "pipe failed"};
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return {false, "fork failed"};
  if (pid == 0) {
    ::close(fds[0]);
    const int64_t baseline = CurrentRssBytes();
    TrainSummary summary;
    const Status s = Train(o, TrainCallbacks(), &summary);
    const std::string msg = std::to_string(s.ok() ? 1 : 0) + " " + std::to_string(PeakRssBytes()) + " " +
                            std::to_string(baseline) + " " + (s.ok() ? std::string() : s.ToString());
    (void)!::write(fds[1], msg.data(), msg.size());
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) msg.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ChildResult r;
  long long peak = 0, baseline = 0;
  int ok = 0, used = 0;
  if (std::sscanf(msg.c_str(), "%d %lld %lld %n", &ok, &peak, &baseline, &used) < 3) {
    return {false, "the child reported nothing (status " + std::to_string(status) + ")"};
  }
  r.ok = ok == 1;
  r.peak_rss = peak;
  r.baseline_rss = baseline;
  r.error = msg.substr(static_cast<size_t>(used));
  return r;
}

TEST(DlrmMemoryBudgetTest, TablesFourTimesTheBudgetTrainOnDiskWithinIt) {
  testing::TempDir dir;
  constexpr int64_t kBudget = int64_t{160} << 20;  // the test process alone is about 100 MiB (its libraries)
  TrainOptions o;
  o.model = "dlrm";
  o.embedding_dim = 64;
  o.sparse_optimizer = "sgd";  // a row: 64 f32, 256 bytes
  kernels::EmbeddingRowLayout layout;
  layout.dim = o.embedding_dim;
  layout.optimizer = kernels::SparseOptimizer::kSgd;
  const int64_t tables = 4;
  const int64_t rows = 4 * kBudget / (tables * layout.row_bytes());
  {
    // Generated in a child too, so this process stays small (its pages
    // count in the training child's RSS).
    datasets::GenerateClicksOptions g;
    g.output = dir.File("clicks");
    g.num_tables = tables;
    g.rows = rows;
    g.dim = 8;
    g.num_samples = 12000;
    g.zipf = 1.05;
    g.seed = 3;
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ThreadPool pool(1);
      ::_exit(datasets::GenerateClicks(g, CpuContext(0, &pool)).ok() ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "generating the clicks failed";
  }
  o.dataset = dir.File("clicks");
  o.bottom_mlp = {32, 64};
  o.top_mlp = {32, 1};
  o.batch_size = 512;
  o.eval_batch_size = 512;
  o.epochs = 1;
  o.lookahead = 8;
  o.seed = 1;
  o.threads = 2;
  o.progress = false;
  o.table_store = "disk";
  o.table_dir = dir.path();
  o.memory_budget = kBudget;
  const ChildResult r = TrainInChild(o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GE(tables * rows * layout.row_bytes(), 4 * kBudget - tables * layout.row_bytes());
  EXPECT_GT(r.peak_rss, r.baseline_rss);
  std::printf("peak RSS %.1f MiB under a budget of %lld MiB (baseline %.1f MiB)\n", r.peak_rss / 1048576.0,
              static_cast<long long>(kBudget >> 20), r.baseline_rss / 1048576.0);
  EXPECT_LE(r.peak_rss, kBudget + kBudget / 10)
      << "peak RSS " << (r.peak_rss >> 20) << " MiB, budget " << (kBudget >> 20) << " MiB, baseline "
      << (r.baseline_rss >> 20) << " MiB";
}

}  // namespace
}  // namespace foresight::trainer
