#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace edgefuse {

namespace {

constexpr auto kSpin = std::chrono::microseconds(200);  // how long an idle thread watches before blocking

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

using Clock = std::chrono::steady_clock;

// Spins until done() or `deadline`; returns done().
template <typename Done>
bool spin_until(Done done, Clock::time_point deadline = Clock::now() + kSpin) {
  for (int i = 0;; ++i) {
    if (done()) return true;
    cpu_relax();
    if ((i & 63) == 63 && Clock::now() > deadline) return done();
  }
}

}  // namespace

int ThreadPool::hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int threads) : shares_(static_cast<size_t>(threads <= 0 ? hardware_threads() : threads)) {
  const int total = static_cast<int>(shares_.size());
  workers_.reserve(static_cast<size_t>(total - 1));
  for (int i = 0; i + 1 < total; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true, std::memory_order_release);
  }
  start_cv_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run_chunks(uint32_t generation, int self) {
  const int threads = size();
  // Chunks this thread ran, counted into chunks_done_ once it finds no more: one atomic add a
  // thread instead of one a chunk, whose cache line would otherwise move between the cores each time.
  int64_t finished = 0, total = 0;
  const auto report = [&] {
    if (finished == 0) return;
    if (chunks_done_.fetch_add(finished, std::memory_order_seq_cst) + finished == total &&
        caller_blocked_.load(std::memory_order_seq_cst)) {
      // The caller may be waking on its own or already in its next job: a spare notify is harmless.
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_one();
    }
  };
  for (int k = 0; k < threads; ++k) {
    std::atomic<uint64_t>& claims = shares_[static_cast<size_t>((self + k) % threads)].claims;
    for (;;) {
      uint64_t state = claims.load(std::memory_order_acquire);
      uint64_t index = 0;
      do {
        // A later job has started, so this one is over: this thread ran none of its chunks.
        if (static_cast<uint32_t>(state >> 32) != generation) return report();
        index = state & 0xffff;
        if (index >= ((state >> 16) & 0xffff)) break;
      } while (!claims.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel, std::memory_order_acquire));
      if (index >= ((state >> 16) & 0xffff)) break;  // this share is all claimed
      // The job's fields stay until its chunks are all counted done, this one included.
      const int64_t begin = static_cast<int64_t>(index) * job_.chunk;
      total = job_.chunks;
      (*job_.fn)(begin, std::min(begin + job_.chunk, job_.size));
      ++finished;
    }
  }
  report();
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen_generation = 0, seen_wakes = 0;
  for (;;) {
    auto has_job = [&] {
      return stopping_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_seq_cst) != seen_generation;
    };
    auto has_news = [&] { return has_job() || wakes_.load(std::memory_order_seq_cst) != seen_wakes; };
    // Watch for kSpin, or to the end of a wake()'s hold.
    const Clock::time_point held{Clock::duration{watch_until_.load(std::memory_order_relaxed)}};
    if (!spin_until(has_job, std::max(Clock::now() + kSpin, held))) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);  // before has_news looks again
      start_cv_.wait(lock, has_news);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    seen_wakes = wakes_.load(std::memory_order_seq_cst);
    if (!has_job()) continue;  // roused by wake(): watch again, to the end of its hold
    if (stopping_.load(std::memory_order_acquire)) return;
    seen_generation = generation_.load(std::memory_order_acquire);
    run_chunks(static_cast<uint32_t>(seen_generation), index + 1);
  }
}

void ThreadPool::wake(std::chrono::microseconds hold) {
  if (workers_.empty()) return;
  const int64_t until = (Clock::now() + hold).time_since_epoch().count();
  int64_t current = watch_until_.load(std::memory_order_relaxed);
  while (current < until && !watch_until_.compare_exchange_weak(current, until, std::memory_order_relaxed)) {
  }
  // As for a job's generation_: stored before sleepers_ is read, which a blocking worker counts
  // up before it looks at wakes_ again.
  wakes_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    start_cv_.notify_all();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, RangeFn fn, bool contiguous) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = (n + grain - 1) / grain;
  if (workers_.empty() || max_chunks == 1) {
    fn(0, n);
    return;
  }
  // A few chunks per thread balances uneven chunk cost without much contention (and a count that
  // fits the 16 bits of a share).
  const int64_t target_chunks = std::min<int64_t>({max_chunks, static_cast<int64_t>(size()) * 4, 0xffff});
  job_.fn = &fn;
  job_.size = n;
  job_.chunk = (n + target_chunks - 1) / target_chunks;
  const auto chunks = static_cast<uint64_t>((n + job_.chunk - 1) / job_.chunk);
  job_.chunks = static_cast<int64_t>(chunks);
  chunks_done_.store(0, std::memory_order_relaxed);
  const uint64_t generation = generation_.load(std::memory_order_relaxed) + 1;
  const auto threads = static_cast<uint64_t>(size());
  for (uint64_t t = 0; t < threads; ++t) {
    const uint64_t share_begin = contiguous ? chunks * t / threads : 0;
    const uint64_t share_end = contiguous ? chunks * (t + 1) / threads : t == 0 ? chunks : 0;
    shares_[t].claims.store((generation & 0xffffffffu) << 32 | share_end << 16 | share_begin,
                            std::memory_order_release);
  }
  // The job a wake() was for has come: after it, idle workers block after kSpin again rather
  // than spin out the hold on a core that other work (video decode) may need.
  watch_until_.store(0, std::memory_order_relaxed);
  generation_.store(generation, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    // Under the mutex: a worker counted in sleepers_ is either still checking has_news under it
    // (and will see the new generation) or already waiting.
    std::lock_guard<std::mutex> lock(mutex_);
    start_cv_.notify_all();
  }
  run_chunks(static_cast<uint32_t>(generation), 0);
  auto all_done = [&] { return chunks_done_.load(std::memory_order_seq_cst) == static_cast<int64_t>(chunks); };
  if (!spin_until(all_done)) {
    std::unique_lock<std::mutex> lock(mutex_);
    caller_blocked_.store(true, std::memory_order_seq_cst);  // before all_done looks again
    done_cv_.wait(lock, all_done);
    caller_blocked_.store(false, std::memory_order_relaxed);
  }
  job_.fn = nullptr;
}

void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, RangeFn fn, bool contiguous) {
  if (pool != nullptr) {
    pool->parallel_for(n, grain, fn, contiguous);
  } else if (n > 0) {
    fn(0, n);
  }
}

}  // namespace edgefuse
