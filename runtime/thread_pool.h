// A fixed pool of worker threads for data-parallel loops. The calling thread takes part, so a
// pool of size 1 runs everything inline with no synchronisation.
//
// A frame runs hundreds of small kernels back to back, so waking sleeping threads for each one
// (a futex round trip, tens of microseconds on a VM) would cost more than many kernels do. Idle
// workers therefore spin for a short while (kSpin) watching for the next job before they block,
// and chunks are handed out with an atomic counter. The mutex and condition variables are touched
// only when a thread has actually blocked (counted in sleepers_ and caller_blocked_): taking the
// mutex on every job moved its cache line between the cores twice a job, about 0.9 us of the
// 1.1 us an empty two-thread job cost. The words each side polls or writes per job sit on cache
// lines of their own for the same reason.
//
// A job is done when its chunks are, not when every worker has checked in: on a camera box other
// processes (video decode) share the cores, and a worker that is not scheduled when a job starts
// must not hold the caller, which then runs the chunks itself. Chunks are claimed from atomic
// words holding the job's generation, the end of a share of chunks and the next chunk of it, so a
// worker waking late finds its job over and takes nothing from the next one.
//
// A worker that has blocked can take long to wake: a futex round trip, and on a VM whose idle vCPU
// the hypervisor has parked, milliseconds (measured here: a median of 1.8 ms after 33 ms idle,
// longer than a whole two-thread YOLOX-nano frame). A caller that knows a job is coming (a frame
// being preprocessed) calls wake() first, so that the wake-up overlaps its own work.
//
// Spread (the default): every thread claims from one share of all the chunks, in order, so the
// threads that are ahead take more. Contiguous: each thread first claims from its own slice (the
// caller the first, worker i the (i + 1)-th), then from the others'; kernels that run the same
// rows in consecutive jobs (the Conv pairs' bands) then find their inputs in their own core's cache.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace edgefuse {

// What parallel_for runs: a non-owning reference to a callable taking (begin, end). A
// std::function would allocate for every lambda capturing more than two references, hundreds of
// times a frame; parallel_for returns only after its last call, so the callable outlives its uses.
class RangeFn {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, RangeFn>>>
  RangeFn(F&& fn)  // NOLINT(google-explicit-constructor): lambdas convert at every call site
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(fn)))),
        call_(&invoke<std::remove_reference_t<F>>) {}
  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  template <typename F>
  static void invoke(void* object, int64_t begin, int64_t end) {
    (*static_cast<F*>(object))(begin, end);
  }
  void* object_;
  void (*call_)(void*, int64_t, int64_t);
};

class ThreadPool {
 public:
  // threads <= 0 means one per hardware core.
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(begin, end) over disjoint chunks covering [0, n), each at least `grain` long
  // (except the last), and returns when all are done; `contiguous`: see the header. Not
  // reentrant: call it from one thread.
  void parallel_for(int64_t n, int64_t grain, RangeFn fn, bool contiguous = false);

  static int hardware_threads();

  // Rouses blocked workers to watch for the next job (spinning, not blocked) until it starts or
  // `hold` has passed; returns at once. A job that starts after the hold still runs: its workers
  // are then woken as usual. Unlike parallel_for, any thread may call it, during a job too.
  void wake(std::chrono::microseconds hold);

  // Workers blocked right now (the others are running chunks or watching for a job): for tests.
  int blocked_workers() const { return sleepers_.load(std::memory_order_acquire); }

 private:
  void worker_loop(int index);
  // Runs chunks of the job of `generation` until none is left or a later job has started: first
  // thread `self`'s share, then any other thread's that are still unclaimed.
  void run_chunks(uint32_t generation, int self);

  static constexpr size_t kCacheLine = 64;

  std::vector<std::thread> workers_;
  std::mutex mutex_;  // only for blocking waits; the fast path is lock-free
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  // Job description: written by parallel_for before it publishes claims_ (release), read by a
  // thread only after it claimed a chunk of that job (acquire); the job cannot end, and these be
  // rewritten, before that chunk is done.
  struct alignas(kCacheLine) Job {
    const RangeFn* fn = nullptr;
    int64_t size = 0;
    int64_t chunk = 0;
    int64_t chunks = 0;
  } job_;
  // Per thread (the caller is 0, worker i is i + 1), the chunks it claims first: generation (32
  // bits) | end of the share (16) | next chunk to claim (16). Spread: one share (the caller's)
  // holds every chunk; contiguous: each thread's share is its slice.
  struct alignas(kCacheLine) Share {
    std::atomic<uint64_t> claims{0};
  };
  std::vector<Share> shares_;
  // Polled by idle workers, written once a job by the caller. A worker counts itself in sleepers_
  // before it blocks and re-checks generation_ after; the caller stores generation_ before it
  // reads sleepers_ (both sequentially consistent), so one of them sees the other.
  alignas(kCacheLine) std::atomic<uint64_t> generation_{0};  // its low 32 bits are the job's generation
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stopping_{false};
  // wake(): counted up, as generation_ is per job, and the steady_clock time (in its ticks) until
  // which idle workers watch rather than block.
  std::atomic<uint64_t> wakes_{0};
  std::atomic<int64_t> watch_until_{0};
  // Counted up by whoever finishes a chunk, polled by the caller; caller_blocked_ pairs with it as
  // sleepers_ with generation_.
  alignas(kCacheLine) std::atomic<int64_t> chunks_done_{0};
  std::atomic<bool> caller_blocked_{false};
};

// parallel_for on `pool` when given, else inline.
void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, RangeFn fn, bool contiguous = false);

}  // namespace edgefuse
