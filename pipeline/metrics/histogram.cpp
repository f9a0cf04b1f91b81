// Histogram: bucket search by binary search over the bounds, relaxed atomics (a scrape needs no
// ordering between buckets; it may see an observation in a bucket before it shows in the sum).
#include "pipeline/metrics/histogram.h"

#include <algorithm>
#include <cmath>

#include "runtime/status.h"

namespace edgefuse {

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      bucket_counts_(std::make_unique<std::atomic<uint64_t>[]>(upper_bounds_.size() + 1)) {
  for (size_t i = 0; i < upper_bounds_.size(); ++i) {
    EF_ASSERT(std::isfinite(upper_bounds_[i]), "histogram bound ", i, " is not finite");
    EF_ASSERT(i == 0 || upper_bounds_[i - 1] < upper_bounds_[i], "histogram bounds must increase strictly (index ", i,
              ")");
  }
}

void Histogram::observe(double value) {
  if (std::isnan(value)) return;
  // lower_bound: the first bound >= value, so a value equal to a bound lands in that bucket.
  const auto bucket = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) - upper_bounds_.begin();
  bucket_counts_[static_cast<size_t>(bucket)].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

HistogramSnapshot Histogram::snapshot() const {
  HistogramSnapshot snapshot;
  snapshot.upper_bounds = upper_bounds_;
  snapshot.bucket_counts.resize(upper_bounds_.size() + 1);
  for (size_t i = 0; i < snapshot.bucket_counts.size(); ++i) {
    snapshot.bucket_counts[i] = bucket_counts_[i].load(std::memory_order_relaxed);
    snapshot.count += snapshot.bucket_counts[i];
  }
  snapshot.sum = sum_.load(std::memory_order_relaxed);
  return snapshot;
}

std::vector<double> latency_buckets_ms() {
  return {5, 10, 20, 30, 50, 75, 100, 150, 250, 500, 1000, 2500};
}

std::vector<double> inference_buckets_ms() {
  return {1, 2, 5, 10, 15, 20, 30, 50, 100, 250};
}

std::vector<double> dwell_buckets_s() {
  return {1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600};
}

}  // namespace edgefuse
