#include "foresight/core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace foresight {

namespace {
thread_local const ThreadPool* tls_worker_of = nullptr;
// This worker is running a step (a Submit task), and within it lent
// itself to loop helpers (which do not lend again).
thread_local bool tls_in_step = false;
thread_local bool tls_lending = false;

// How long an idle thread spins before it sleeps: longer than the gaps
// between a step's parallel loops, short enough that a finished step
// gives its cores back at once.
constexpr int64_t kSpinNanos = 100'000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until ready() or kSpinNanos pass; returns ready()'s last value.
template <typename Ready>
bool SpinFor(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(kSpinNanos);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}
}  // namespace

int OnlineCpus() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(num_threads > 0 ? num_threads : OnlineCpus()), spin_(num_threads_ <= OnlineCpus()) {
  workers_.reserve(num_threads_ - 1);
  for (int i = 0; i + 1 < num_threads_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

bool ThreadPool::InWorker() const { return tls_worker_of == this; }

void ThreadPool::WorkerLoop() {
  tls_worker_of = this;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (spin_ && tasks_.empty() && !stop_.load(std::memory_order_relaxed)) {
      lock.unlock();
      SpinFor([this] {
        return queued_.load(std::memory_order_relaxed) > 0 || stop_.load(std::memory_order_relaxed);
      });
      lock.lock();
    }
    cv_.wait(lock, [this] { return stop_.load(std::memory_order_relaxed) || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stop_ and drained
    RunOneTask(lock);
  }
}

bool ThreadPool::RunOneTask(std::unique_lock<std::mutex>& lock) {
  if (tasks_.empty()) return false;
  Task task = std::move(tasks_.front());
  tasks_.pop_front();
  queued_.fetch_sub(1, std::memory_order_relaxed);
  if (task.loop_helper) helpers_.fetch_sub(1, std::memory_order_relaxed);
  lock.unlock();
  tls_in_step = !task.loop_helper;
  task.fn();
  tls_in_step = false;
  lock.lock();
  return true;
}

void ThreadPool::LendToLoops() {
  if (!tls_in_step || tls_lending || helpers_.load(std::memory_order_relaxed) == 0) return;
  tls_lending = true;
  for (;;) {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (tasks_.empty() || !tasks_.front().loop_helper) break;
      fn = std::move(tasks_.front().fn);
      tasks_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
      helpers_.fetch_sub(1, std::memory_order_relaxed);
    }
    lent_.fetch_add(1, std::memory_order_relaxed);
    fn();
  }
  tls_lending = false;
}

// State shared by the caller and the helper tasks of one ParallelFor.
struct ThreadPool::Job {
  int64_t n, grain, chunks;
  const std::function<void(int64_t, int64_t, int64_t)>* fn;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::mutex mu;
  std::condition_variable cv;

  // Claims the next chunk into *c; false when every chunk is claimed.
  bool Claim(int64_t* c) {
    *c = next.fetch_add(1, std::memory_order_relaxed);
    return *c < chunks;
  }
  bool Claimable() const { return next.load(std::memory_order_relaxed) < chunks; }
  void Run(int64_t c) {
    const int64_t b = c * grain;
    (*fn)(c, b, b + grain < n ? b + grain : n);
  }
  // Counts `ran` chunks as done; the last one wakes the loop's caller.
  void Finished(int64_t ran) {
    if (ran > 0 && done.fetch_add(ran, std::memory_order_acq_rel) + ran == chunks) {
      std::lock_guard<std::mutex> lock(mu);
      cv.notify_all();
    }
  }
  // Claims and runs chunks until none are left; returns chunks run.
  int64_t Drain() {
    int64_t ran = 0;
    for (int64_t c; Claim(&c); ++ran) Run(c);
    Finished(ran);
    return ran;
  }
};

void ThreadPool::WaitJob(Job& job) {
  // The helpers' last chunks usually end within microseconds of ours.
  if (spin_) SpinFor([&] { return job.done.load(std::memory_order_acquire) == job.chunks; });
  std::unique_lock<std::mutex> lock(job.mu);
  job.cv.wait(lock, [&] { return job.done.load(std::memory_order_acquire) == job.chunks; });
}

std::shared_ptr<ThreadPool::Job> ThreadPool::OpenStepLoop() const {
  for (const std::shared_ptr<Job>& job : step_loops_) {
    if (job->Claimable()) return job;
  }
  return nullptr;
}

void ThreadPool::SharedStepLoop(int64_t n, int64_t grain, int64_t chunks,
                                const std::function<void(int64_t, int64_t, int64_t)>& fn) {
  auto job = std::make_shared<Job>();
  job->n = n;
  job->grain = grain;
  job->chunks = chunks;
  job->fn = &fn;
  {
    std::lock_guard<std::mutex> lock(mu_);
    step_loops_.push_back(job);
    open_loops_.fetch_add(1, std::memory_order_relaxed);
  }
  help_cv_.notify_all();
  int64_t ran = 0;
  for (int64_t c; job->Claim(&c); ++ran) {
    if (ran > 0) LendToLoops();  // as the inline loop does between its chunks
    job->Run(c);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    step_loops_.erase(std::find(step_loops_.begin(), step_loops_.end(), job));
    open_loops_.fetch_sub(1, std::memory_order_relaxed);
  }
  job->Finished(ran);
  WaitJob(*job);
}

void ThreadPool::HelpUntil(const std::function<bool()>& ready) {
  helpers_waiting_.fetch_add(1);
  struct Leave {
    std::atomic<int>& waiting;
    ~Leave() { waiting.fetch_sub(1); }
  } leave{helpers_waiting_};
  for (;;) {
    const uint64_t seen = wake_seq_.load(std::memory_order_acquire);
    if (ready()) return;
    std::unique_lock<std::mutex> lock(mu_);
    if (std::shared_ptr<Job> job = OpenStepLoop()) {
      lock.unlock();
      // Chunk by chunk, so that the caller leaves as soon as it may.
      int64_t ran = 0;
      for (int64_t c; !ready() && job->Claim(&c); ++ran) job->Run(c);
      job->Finished(ran);
      helped_chunks_.fetch_add(ran, std::memory_order_relaxed);
      continue;
    }
    if (!tasks_.empty()) {
      helped_tasks_.fetch_add(1, std::memory_order_relaxed);
      RunOneTask(lock);
      continue;
    }
    if (wake_seq_.load(std::memory_order_acquire) != seen) continue;
    // Spin only while no step loop is open: an open loop whose chunks are
    // all claimed adds no work, and spinning on it would only contend mu_.
    if (spin_ && open_loops_.load(std::memory_order_relaxed) == 0) {
      lock.unlock();
      const bool work = SpinFor([&] {
        return queued_.load(std::memory_order_relaxed) > 0 || open_loops_.load(std::memory_order_relaxed) > 0 ||
               wake_seq_.load(std::memory_order_acquire) != seen;
      });
      if (work) continue;
      lock.lock();
    }
    help_cv_.wait(lock, [&] {
      return !tasks_.empty() || OpenStepLoop() != nullptr || wake_seq_.load(std::memory_order_acquire) != seen;
    });
  }
}

void ThreadPool::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_seq_.fetch_add(1, std::memory_order_acq_rel);
  }
  help_cv_.notify_all();
}

void ThreadPool::ParallelForChunks(int64_t n, int64_t grain,
                                   const std::function<void(int64_t, int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (grain <= 0) grain = 1;
  const int64_t chunks = NumChunks(n, grain);
  if (chunks == 1 || workers_.empty() || InWorker()) {
    const bool lend = InWorker();
    if (lend && chunks > 1 && tls_in_step && !tls_lending) {
      // Open to helpers, those waiting now and those that start to wait
      // while it runs (thread_pool.h, "Helpers").
      SharedStepLoop(n, grain, chunks, fn);
      return;
    }
    for (int64_t c = 0; c < chunks; ++c) {
      if (lend && c > 0) LendToLoops();
      const int64_t b = c * grain;
      fn(c, b, b + grain < n ? b + grain : n);
    }
    return;
  }
  auto job = std::make_shared<Job>();
  job->n = n;
  job->grain = grain;
  job->chunks = chunks;
  job->fn = &fn;
  const int64_t helpers = std::min<int64_t>(static_cast<int64_t>(workers_.size()), chunks - 1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int64_t i = 0; i < helpers; ++i) tasks_.push_front(Task{[job] { job->Drain(); }, true});
    queued_.fetch_add(helpers, std::memory_order_relaxed);
    helpers_.fetch_add(helpers, std::memory_order_relaxed);
  }
  if (helpers == 1) cv_.notify_one(); else cv_.notify_all();
  if (helpers_waiting_.load() > 0) help_cv_.notify_all();
  job->Drain();
  WaitJob(*job);
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  ParallelForChunks(n, grain, [&fn](int64_t, int64_t b, int64_t e) { fn(b, e); });
}

std::future<void> ThreadPool::Submit(std::function<void()> fn) {
  auto task = std::make_shared<std::packaged_task<void()>>(std::move(fn));
  std::future<void> fut = task->get_future();
  if (workers_.empty()) {
    (*task)();  // a budget of one thread: the caller is the only CPU
    return fut;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(Task{[task] { (*task)(); }, false});
    queued_.fetch_add(1, std::memory_order_relaxed);
  }
  cv_.notify_one();
  if (helpers_waiting_.load() > 0) help_cv_.notify_all();
  return fut;
}

namespace {
std::mutex g_pool_mu;
std::unique_ptr<ThreadPool> g_pool;
}  // namespace

ThreadPool* DefaultThreadPool() {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (!g_pool) g_pool = std::make_unique<ThreadPool>(OnlineCpus());
  return g_pool.get();
}

void SetDefaultThreads(int num_threads) {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  g_pool = std::make_unique<ThreadPool>(num_threads);
}

}  // namespace foresight
