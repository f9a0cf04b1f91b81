#include "runtime/thread_pool.h"

#include <doctest/doctest.h>

#include <atomic>
#include <vector>

using namespace edgefuse;

TEST_CASE("parallel_for covers every index exactly once, for any pool size and range") {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    CHECK(pool.size() == threads);
    for (int64_t n : {0, 1, 7, 13, 1000}) {
      for (int64_t grain : {1, 5, 64}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        pool.parallel_for(n, grain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
        });
        for (auto& h : hits) REQUIRE(h.load() == 1);
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
    pool.parallel_for(n, 1, [&](int64_t begin, int64_t end) {
      if (begin < 0 || end > n || begin >= end) foreign++;
      for (int64_t i = begin; i < end && i < n; ++i) hits[static_cast<size_t>(i)]++;
    });
    REQUIRE(foreign.load() == 0);
    for (auto& h : hits) REQUIRE(h.load() == 1);
  }
}
