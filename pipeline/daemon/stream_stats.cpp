#include "pipeline/daemon/stream_stats.h"

#include <algorithm>
#include <cmath>

namespace edgefuse {

LatencySummary summarize_latencies_ms(std::vector<double>& samples) {
  LatencySummary summary;
  summary.count = static_cast<int64_t>(samples.size());
  if (samples.empty()) return summary;
  std::sort(samples.begin(), samples.end());
  const auto rank = [&](double p) {
    const auto index = static_cast<size_t>(std::ceil(p * static_cast<double>(samples.size()))) - 1;
    return samples[std::min(index, samples.size() - 1)];
  };
  summary.p50_ms = rank(0.50);
  summary.p99_ms = rank(0.99);
  summary.max_ms = samples.back();
  return summary;
}

void StreamStats::add_latency_ms(double ms) {
  latency_ms.observe(ms);
  const std::lock_guard lock(mutex_);
  window_.push_back(ms);
  if (total_.size() < kMaxTotalSamples) total_.push_back(ms);
}

LatencySummary StreamStats::take_window() {
  std::vector<double> samples;
  {
    const std::lock_guard lock(mutex_);
    samples.swap(window_);
  }
  return summarize_latencies_ms(samples);
}

LatencySummary StreamStats::total() {
  std::vector<double> samples;
  {
    const std::lock_guard lock(mutex_);
    samples = total_;
  }
  return summarize_latencies_ms(samples);
}

}  // namespace edgefuse
