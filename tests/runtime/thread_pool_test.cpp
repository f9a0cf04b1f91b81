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
