#include "runtime/thread_pool.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace edgefuse;

TEST_CASE("parallel_for covers every index exactly once, for any pool size and range") {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    CHECK(pool.size() == threads);
    for (int64_t n : {0, 1, 7, 13, 1000}) {
      for (int64_t grain : {1, 5, 64}) {
        for (bool contiguous : {false, true}) {
          std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
          pool.parallel_for(
              n, grain,
              [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
              },
              contiguous);
          for (auto& h : hits) REQUIRE(h.load() == 1);
        }
      }
    }
  }
}

// A job ends when its chunks are done, not when every worker has checked in, so with more workers
// than cores most wake after their job is over: they must take nothing from the job running then.
// Many short jobs back to back, each index exactly once, every job seeing only its own chunks.
TEST_CASE("parallel_for: workers waking late take no chunk of a later job") {
  ThreadPool pool(8);
  for (int round = 0; round < 3000; ++round) {
    const int64_t n = 5 + round % 29;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::atomic<int> foreign{0};
    pool.parallel_for(
        n, 1,
        [&](int64_t begin, int64_t end) {
          if (begin < 0 || end > n || begin >= end) foreign++;
          for (int64_t i = begin; i < end && i < n; ++i) hits[static_cast<size_t>(i)]++;
        },
        round % 2 == 1);  // spread and contiguous jobs interleaved
    REQUIRE(foreign.load() == 0);
    for (auto& h : hits) REQUIRE(h.load() == 1);
  }
}

// Contiguous: the caller claims the first slice of the chunks before any other thread's, so with
// chunks long enough for every thread to be running, the caller runs chunks 0 and 1 of 4 (spread,
// the worker would take chunk 1 while the caller runs chunk 0).
TEST_CASE("parallel_for contiguous: each thread runs its own slice first") {
  ThreadPool pool(2);
  for (int round = 0; round < 5; ++round) {
    std::vector<std::thread::id> ran_on(4);
    pool.parallel_for(
        4, 1,
        [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            ran_on[static_cast<size_t>(i)] = std::this_thread::get_id();
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        },
        true);
    CHECK(ran_on[0] == std::this_thread::get_id());
    CHECK(ran_on[1] == std::this_thread::get_id());
  }
}

// Between jobs longer than the spin time the workers block; the next job must wake them (else the
// caller would silently run every chunk alone). Chunks long enough that a woken worker takes some;
// one round of three with a worker taking part is enough (a loaded machine may not schedule one in
// time), a lost wake-up makes it none.
TEST_CASE("parallel_for wakes workers that blocked between jobs") {
  ThreadPool pool(3);
  int rounds_with_workers = 0;
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // far past the spin: all asleep
    std::vector<std::thread::id> ran_on(12);
    pool.parallel_for(12, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        ran_on[static_cast<size_t>(i)] = std::this_thread::get_id();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
    const bool workers_ran =
        std::any_of(ran_on.begin(), ran_on.end(), [](std::thread::id id) { return id != std::this_thread::get_id(); });
    rounds_with_workers += workers_ran ? 1 : 0;
  }
  CHECK(rounds_with_workers > 0);
}

// A caller whose own chunks end long before a worker's blocks; the worker finishing the job must
// wake it (a lost wake-up hangs here).
TEST_CASE("parallel_for: a caller blocked on a slow worker's chunk is woken when it ends") {
  ThreadPool pool(2);
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> done{0};
    pool.parallel_for(
        2, 1,
        [&](int64_t begin, int64_t) {
          if (begin == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the caller's spin
          done++;
        },
        true);  // contiguous: chunk 1 is the worker's
    REQUIRE(done.load() == 2);
  }
}

namespace {

// Polls until pool.blocked_workers() == count, for up to `limit` (the wait is on other threads being
// scheduled, which a loaded machine can delay).
bool blocked_workers_reach(const ThreadPool& pool, int count,
                           std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (pool.blocked_workers() != count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

}  // namespace

TEST_CASE("wake: blocked workers watch for a job until it starts or the hold ends, then block again") {
  ThreadPool pool(3);
  REQUIRE(blocked_workers_reach(pool, 2));  // idle past the spin
  // Long enough that a loaded machine still sees both workers up before it ends.
  pool.wake(std::chrono::milliseconds(1500));
  CHECK(blocked_workers_reach(pool, 0));
  CHECK(blocked_workers_reach(pool, 2));  // the hold is over

  // A job during a hold runs as any other, and ends the hold: the workers block again soon after
  // it, long before the hold would have ended.
  pool.wake(std::chrono::seconds(30));
  REQUIRE(blocked_workers_reach(pool, 0));
  std::vector<std::atomic<int>> hits(100);
  pool.parallel_for(100, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
  });
  for (auto& h : hits) CHECK(h.load() == 1);
  CHECK(blocked_workers_reach(pool, 2));

  // A shorter hold does not cut a longer one short; a pool of one thread has nobody to wake.
  pool.wake(std::chrono::milliseconds(1500));
  pool.wake(std::chrono::milliseconds(1));
  CHECK(blocked_workers_reach(pool, 0));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(pool.blocked_workers() == 0);
  ThreadPool alone(1);
  alone.wake(std::chrono::milliseconds(10));
  CHECK(alone.blocked_workers() == 0);
}
