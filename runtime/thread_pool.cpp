#include "runtime/thread_pool.h"

#include <algorithm>

namespace edgefuse {

int ThreadPool::hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int threads) {
  const int total = threads <= 0 ? hardware_threads() : threads;
  workers_.reserve(static_cast<size_t>(total - 1));
  for (int i = 0; i + 1 < total; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_cv_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run_chunks() {
  for (;;) {
    int64_t begin;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_chunk_start_ >= job_size_) return;
      begin = next_chunk_start_;
      next_chunk_start_ += chunk_;
    }
    (*job_)(begin, std::min(begin + chunk_, job_size_));
  }
}

void ThreadPool::worker_loop(int /*index*/) {
  uint64_t seen_generation = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return stopping_ || generation_ != seen_generation; });
      if (stopping_) return;
      seen_generation = generation_;
    }
    run_chunks();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_workers_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = (n + grain - 1) / grain;
  if (workers_.empty() || max_chunks == 1) {
    fn(0, n);
    return;
  }
  // A few chunks per thread balances uneven chunk cost without much locking.
  const int64_t target_chunks = std::min<int64_t>(max_chunks, static_cast<int64_t>(size()) * 4);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    job_size_ = n;
    chunk_ = (n + target_chunks - 1) / target_chunks;
    next_chunk_start_ = 0;
    pending_workers_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  start_cv_.notify_all();
  run_chunks();
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return pending_workers_ == 0; });
  job_ = nullptr;
}

void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (pool != nullptr) {
    pool->parallel_for(n, grain, fn);
  } else if (n > 0) {
    fn(0, n);
  }
}

}  // namespace edgefuse
