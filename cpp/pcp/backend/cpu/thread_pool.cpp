#include "pcp/backend/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "pcp/core/error.h"

namespace pcp {
namespace {

thread_local bool t_in_parallel = false;
constexpr int kMaxThreads = 1024;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spin this long before sleeping, on both sides of a parallel region. A wake-up through the
// kernel costs tens of microseconds, as much as a whole 1M-element add: workers spinning between
// back-to-back ops (as OpenMP runtimes do) and a caller spinning for its workers' last chunks
// keep mid-sized ops parallel.
constexpr auto kSpin = std::chrono::microseconds(300);

// Calls ready() until it is true or kSpin has passed; returns its last value.
template <class Ready>
bool spin_until(Ready&& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 1;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) return ready();
  }
}

int default_threads() {
  if (const char* env = std::getenv("PCP_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return std::min(n, kMaxThreads);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

class ThreadPool {
 public:
  static ThreadPool& instance() {
    static ThreadPool* pool = new ThreadPool(default_threads());  // never destroyed: workers outlive exit
    return *pool;
  }

  int size() const { return int(workers_.size()) + 1; }

  void resize(int n) {
    std::lock_guard<std::mutex> run_lock(run_mu_);
    const int old = size();
    stop_workers();
    try {
      start_workers(std::max(1, n));
    } catch (const std::system_error& e) {  // the system has no more threads to give: keep the old pool
      stop_workers();
      start_workers(old);
      fail<RuntimeError>("set_num_threads: could not start ", n, " threads (", e.what(), "); kept ", old);
    }
  }

  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));  // each chunk >= grain
    int64_t chunks = std::min<int64_t>(size(), max_chunks);
    if (chunks <= 1 || t_in_parallel) {
      fn(0, n);
      return;
    }
    std::lock_guard<std::mutex> run_lock(run_mu_);  // one parallel region at a time
    Job job{&fn, n, chunks, 0};
    {
      std::lock_guard<std::mutex> lock(mu_);
      job.generation = ++generation_;
      job_ = job;
      pending_.store(chunks);
      next_.store(tagged(job.generation, 1));  // chunk 0 is the caller's
      published_.store(generation_, std::memory_order_release);
    }
    cv_.notify_all();
    t_in_parallel = true;
    run_chunk(job, 0);
    int64_t c, done = 1;
    while ((c = claim(job)) >= 0) {
      run_chunk(job, c);
      ++done;
    }
    t_in_parallel = false;
    pending_.fetch_sub(done);
    if (!spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(mu_);
      done_cv_.wait(lock, [&] { return pending_.load() == 0; });
    }
    std::lock_guard<std::mutex> lock(mu_);
    job_.fn = nullptr;
    if (error_) {
      auto e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

 private:
  // One parallel region. Chunks are claimed from next_, which carries the region's generation
  // beside the next chunk: a worker that read an older region's job and claims late finds the
  // generation changed and claims nothing, instead of taking (and counting) a chunk of the new
  // region with the old region's bounds.
  struct Job {
    const std::function<void(int64_t, int64_t)>* fn;
    int64_t n, chunks;
    uint64_t generation;
  };
  static uint64_t tagged(uint64_t generation, int64_t chunk) { return generation << 32 | uint64_t(chunk); }

  explicit ThreadPool(int n) { start_workers(n); }

  // The next unclaimed chunk of `job`, or -1 when all are claimed or the region is over.
  int64_t claim(const Job& job) {
    uint64_t v = next_.load();
    for (;;) {
      if (v >> 32 != (job.generation & 0xFFFFFFFFu) || int64_t(v & 0xFFFFFFFFu) >= job.chunks) return -1;
      if (next_.compare_exchange_weak(v, v + 1)) return int64_t(v & 0xFFFFFFFFu);
    }
  }

  void run_chunk(const Job& job, int64_t c) {
    int64_t begin = job.n * c / job.chunks, end = job.n * (c + 1) / job.chunks;
    try {
      (*job.fn)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void worker() {
    t_in_parallel = true;
    uint64_t seen = 0;
    for (;;) {
      spin_until([&] { return published_.load(std::memory_order_acquire) != seen; });
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;  // read with the generation: a claim then succeeds only while this job runs
      }
      int64_t c;
      int64_t done = 0;
      while ((c = claim(job)) >= 0) {
        run_chunk(job, c);
        ++done;
      }
      if (done && pending_.fetch_sub(done) == done) {  // the last chunk: wake the caller if it sleeps
        std::lock_guard<std::mutex> lock(mu_);
        done_cv_.notify_one();
      }
    }
  }

  void start_workers(int n) {
    stop_ = false;
    for (int i = 0; i < n - 1; ++i) workers_.emplace_back([this] { worker(); });
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  std::vector<std::thread> workers_;
  std::mutex run_mu_, mu_;
  std::condition_variable cv_, done_cv_;
  Job job_{nullptr, 0, 0, 0};
  std::atomic<uint64_t> next_{0};      // tagged(generation, next chunk to claim)
  std::atomic<int64_t> pending_{0};    // chunks of the current region not finished
  uint64_t generation_ = 0;
  std::atomic<uint64_t> published_{0};  // generation_, readable without the lock (for spinning)
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace

int get_num_threads() { return ThreadPool::instance().size(); }
void set_num_threads(int64_t n) {
  if (n > kMaxThreads) fail<ValueError>("set_num_threads: ", n, " threads is more than the ", kMaxThreads, " allowed");
  ThreadPool::instance().resize(n > 0 ? int(n) : default_threads());
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  ThreadPool::instance().run(n, grain, fn);
}

}  // namespace pcp
