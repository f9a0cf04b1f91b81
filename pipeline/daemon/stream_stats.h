// Per-stream counters and latency samples, shared by the source callback, the model scheduler and
// the statistics logger. The accounting identity the daemon keeps:
//   frames_in == skipped + dropped + processed + in_flight   (in_flight is 0 once drained)
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "pipeline/metrics/histogram.h"
#include "pipeline/zones/object_filter.h"

namespace edgefuse {

struct LatencySummary {
  int64_t count = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
};

// Nearest-rank percentiles of the samples (sorted in place).
LatencySummary summarize_latencies_ms(std::vector<double>& samples);

class StreamStats {
 public:
  std::atomic<int64_t> frames_in{0};     // decoded frames that reached the daemon
  std::atomic<int64_t> skipped{0};       // not due under inference-interval, or still (motion-gate)
  std::atomic<int64_t> still{0};         // of those skipped: due, but nothing moved (motion-gate)
  std::atomic<int64_t> dropped{0};       // pushed out of a full queue (the oldest frame goes)
  std::atomic<int64_t> processed{0};     // ran through the model
  std::atomic<int64_t> failed{0};        // processed, but preprocessing or inference reported an error
  std::atomic<int64_t> events{0};        // detection events written
  std::atomic<int64_t> track_events{0};  // track events written (events.tracks)
  std::array<std::atomic<int64_t>, kDropReasons> detections_dropped{};  // by masks and filters, per DropReason
  std::atomic<int64_t> tracks{0};              // objects tracked now (track: true), confirmed or not
  std::atomic<int64_t> tracks_started{0};      // tracks begun since the stream started
  std::atomic<double> fps{0};                  // frames in per second over the last few seconds (updated by the daemon)
  Histogram latency_ms{latency_buckets_ms()};  // glass to event, for /metrics

  void add_latency_ms(double ms);
  // Latencies since the last call (for the periodic log line), and over the whole run.
  LatencySummary take_window();
  LatencySummary total();

 private:
  static constexpr size_t kMaxTotalSamples = 1 << 20;  // about 9 hours at 30 fps
  std::mutex mutex_;
  std::vector<double> window_, total_;
};

}  // namespace edgefuse
