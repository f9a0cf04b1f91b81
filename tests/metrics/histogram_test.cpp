// Histogram: bucket edges, the +Inf bucket, NaN, and exact counts under concurrent observers.
#include "pipeline/metrics/histogram.h"

#include <doctest/doctest.h>

#include <thread>
#include <vector>

namespace edgefuse {

TEST_CASE("histogram: a value equal to a bound counts in that bound's bucket") {
  Histogram histogram({1, 2, 5});
  histogram.observe(1);     // le=1
  histogram.observe(1.5);   // le=2
  histogram.observe(2);     // le=2
  histogram.observe(5);     // le=5
  histogram.observe(5.01);  // +Inf
  histogram.observe(-3);    // le=1 (below every bound)
  const HistogramSnapshot snapshot = histogram.snapshot();
  CHECK(snapshot.bucket_counts == std::vector<uint64_t>{2, 2, 1, 1});
  CHECK(snapshot.count == 6);
  CHECK(snapshot.sum == doctest::Approx(1 + 1.5 + 2 + 5 + 5.01 - 3));
  CHECK(snapshot.upper_bounds == std::vector<double>{1, 2, 5});
}

TEST_CASE("histogram: NaN is ignored, infinities land at the ends") {
  Histogram histogram({10});
  histogram.observe(std::numeric_limits<double>::quiet_NaN());
  histogram.observe(std::numeric_limits<double>::infinity());
  histogram.observe(-std::numeric_limits<double>::infinity());
  const HistogramSnapshot snapshot = histogram.snapshot();
  CHECK(snapshot.bucket_counts == std::vector<uint64_t>{1, 1});
  CHECK(snapshot.count == 2);
}

TEST_CASE("histogram: the standard bucket sets increase strictly") {
  for (const auto& bounds : {latency_buckets_ms(), inference_buckets_ms()}) {
    REQUIRE(bounds.size() >= 8);
    for (size_t i = 1; i < bounds.size(); ++i) CHECK(bounds[i - 1] < bounds[i]);
    Histogram histogram(bounds);  // would assert on a bad set
    CHECK(histogram.snapshot().bucket_counts.size() == bounds.size() + 1);
  }
  CHECK(latency_buckets_ms().back() == 2500);
  CHECK(inference_buckets_ms().front() == 1);
}

TEST_CASE("histogram: concurrent observers lose no count") {
  Histogram histogram(latency_buckets_ms());
  constexpr int kThreads = 8, kPerThread = 50000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&histogram, t] {
      // Each thread hits every bucket, including the +Inf one; values are integers so the sum is exact.
      for (int i = 0; i < kPerThread; ++i) histogram.observe(static_cast<double>((i + t) % 3000));
    });
  }
  for (auto& thread : threads) thread.join();
  const HistogramSnapshot snapshot = histogram.snapshot();
  CHECK(snapshot.count == uint64_t{kThreads} * kPerThread);
  double expected_sum = 0;
  uint64_t expected_inf = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      expected_sum += (i + t) % 3000;
      expected_inf += (i + t) % 3000 > 2500;
    }
  }
  CHECK(snapshot.sum == expected_sum);  // integer sums below 2^53 are exact in any order
  CHECK(snapshot.bucket_counts.back() == expected_inf);
}

}  // namespace edgefuse
