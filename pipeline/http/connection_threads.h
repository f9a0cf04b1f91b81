// The status server's connection threads: each accepted connection runs on a thread of its own, so
// a slow client holds one thread and never delays the others. Threads start on demand up to
// max_threads and then stay (an idle one waits for the next connection); beyond max_threads,
// connections wait in arrival order for a thread to free up. cpp-httplib's own ThreadPool has a
// fixed size, which a handful of slow clients exhausts.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace edgefuse {

class ConnectionThreads {
 public:
  explicit ConnectionThreads(int max_threads);
  ~ConnectionThreads();  // shutdown()
  ConnectionThreads(const ConnectionThreads&) = delete;
  ConnectionThreads& operator=(const ConnectionThreads&) = delete;

  void enqueue(std::function<void()> job);
  // Runs the jobs already queued, then joins every thread. Idempotent.
  void shutdown();
  int thread_count() const;

 private:
  void worker_loop();

  const size_t max_threads_;
  mutable std::mutex mutex_;
  std::condition_variable job_ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_threads_ = 0;
  bool shutting_down_ = false;
};

}  // namespace edgefuse
