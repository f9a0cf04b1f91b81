// A Prometheus-style histogram with fixed bucket upper bounds: observe() is lock-free (one atomic
// increment per bucket plus an atomic sum), so hot paths can record latencies on every frame;
// snapshot() copies the counts for rendering at scrape time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace edgefuse {

// The counts at one moment. bucket_counts are per bucket (not cumulative): bucket_counts[i]
// counts values v with upper_bounds[i-1] < v <= upper_bounds[i]; the last entry (index
// upper_bounds.size()) counts values above every bound (the +Inf bucket).
struct HistogramSnapshot {
  std::vector<double> upper_bounds;
  std::vector<uint64_t> bucket_counts;
  uint64_t count = 0;  // the sum of bucket_counts, so _count always equals the +Inf bucket
  double sum = 0;
};

class Histogram {
 public:
  // upper_bounds: finite and strictly increasing (asserted); +Inf is implicit.
  explicit Histogram(std::vector<double> upper_bounds);

  // A value equal to a bound counts in that bound's bucket (Prometheus `le`). NaN is ignored.
  void observe(double value);
  HistogramSnapshot snapshot() const;
  const std::vector<double>& upper_bounds() const { return upper_bounds_; }

 private:
  std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> bucket_counts_;  // upper_bounds_.size() + 1
  std::atomic<double> sum_{0};
};

// Standard bucket sets.
std::vector<double> latency_buckets_ms();    // end-to-end frame latency: 5 ms .. 2.5 s
std::vector<double> inference_buckets_ms();  // one model run: 1 ms .. 250 ms
std::vector<double> dwell_buckets_s();       // a stay in a zone: 1 s .. 1 h

}  // namespace edgefuse
