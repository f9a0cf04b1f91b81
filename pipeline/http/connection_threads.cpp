// ConnectionThreads: one mutex and one condition variable; a job arriving when no thread is idle
// starts a new thread (below the cap), so a queued job never waits behind a busy thread needlessly.
#include "pipeline/http/connection_threads.h"

#include "runtime/status.h"

namespace edgefuse {

ConnectionThreads::ConnectionThreads(int max_threads) : max_threads_(static_cast<size_t>(max_threads)) {
  EF_ASSERT(max_threads >= 1, "ConnectionThreads needs at least one thread");
}

ConnectionThreads::~ConnectionThreads() {
  shutdown();
}

void ConnectionThreads::enqueue(std::function<void()> job) {
  std::lock_guard lock(mutex_);
  EF_ASSERT(!shutting_down_, "job enqueued after shutdown");
  jobs_.push_back(std::move(job));
  if (idle_threads_ < jobs_.size() && threads_.size() < max_threads_) {
    threads_.emplace_back([this] { worker_loop(); });
  } else {
    job_ready_.notify_one();
  }
}

void ConnectionThreads::worker_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ++idle_threads_;
    job_ready_.wait(lock, [this] { return !jobs_.empty() || shutting_down_; });
    --idle_threads_;
    if (jobs_.empty()) return;  // shutting down with nothing left to run
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

void ConnectionThreads::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    shutting_down_ = true;
    threads.swap(threads_);
  }
  job_ready_.notify_all();
  for (auto& thread : threads) thread.join();
}

int ConnectionThreads::thread_count() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(threads_.size());
}

}  // namespace edgefuse
