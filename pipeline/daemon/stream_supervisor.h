// Keeps one stream's video source alive: builds it, watches it, and rebuilds it after a failure.
//
// States (exposed in metrics and as events):
//   connecting -> streaming            the first decoded frame arrived
//   connecting|streaming -> stalled    no decoded frame for watchdog_s (a frozen camera, a dead TCP peer)
//   any -> backoff                     the source failed, stalled, or a live source ended; it is torn
//                                      down and rebuilt after the next delay of the backoff schedule
//   -> ended / failed                  a file reached its end, or failed with reconnect off
// Each stream is supervised on its own thread, so a teardown that blocks (a peer that stopped
// answering) delays only its own stream. Only one source per stream exists at any time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/video/video_source.h"

namespace edgefuse {

enum class StreamState { kConnecting, kStreaming, kStalled, kBackoff, kEnded, kFailed };
inline constexpr int kStreamStateCount = 6;
const char* stream_state_name(StreamState state);

struct SupervisorOptions {
  bool reconnect = true;                              // rebuild after failures, stalls and live end-of-stream
  double watchdog_s = 10;                             // no frame for this long: stalled; 0 = off
  std::vector<double> backoff_s = {1, 2, 5, 10, 30};  // delay before attempt N (the last repeats)
  double jitter = 0.2;  // each delay is scaled by a random factor in [1 - jitter, 1 + jitter]
};

struct StateChange {
  StreamState from, to;
  std::string reason;  // why (an error, "no frame for 10 s", "end of stream"), scrubbed of secrets
  double delay_s = 0;  // kBackoff: how long until the next attempt
};

class StreamSupervisor {
 public:
  using FrameCallback = VideoSource::FrameCallback;
  using StateCallback = std::function<void(const StateChange&)>;

  // Callbacks run on GStreamer's streaming thread (frames) and on the supervisor thread (states).
  StreamSupervisor(VideoSourceOptions source_options, SupervisorOptions options, FrameCallback on_frame,
                   StateCallback on_state);
  ~StreamSupervisor();
  StreamSupervisor(const StreamSupervisor&) = delete;
  StreamSupervisor& operator=(const StreamSupervisor&) = delete;

  // Builds and starts the first source on the calling thread, so a pipeline that cannot even be
  // built (a missing GStreamer element) is reported to the caller; then supervises on its thread.
  Status start();
  // Stops the source and the thread; no callback runs after it returns. Idempotent.
  void stop();

  StreamState state() const { return state_.load(); }
  bool done() const { return state() == StreamState::kEnded || state() == StreamState::kFailed; }
  int64_t reconnects() const { return reconnects_.load(); }  // sources rebuilt after the first
  int64_t stalls() const { return stalls_.load(); }          // watchdog expiries
  std::string last_error() const;
  std::string decoder_name() const;
  // Seconds since the last decoded frame (since the current source started when none yet).
  double seconds_since_frame() const;

 private:
  void supervise();
  Status start_source();
  // Waits until the current source must go (failed, ended, stalled) or stop() is called.
  StateChange watch_source();
  void set_state(StreamState to, std::string reason, double delay_s = 0);
  bool sleep_unless_stopped(double seconds);
  double next_delay_s(int attempt);

  VideoSourceOptions source_options_;
  SupervisorOptions options_;
  FrameCallback on_frame_;
  StateCallback on_state_;
  std::unique_ptr<VideoSource> source_;
  std::thread thread_;
  std::atomic<StreamState> state_{StreamState::kConnecting};
  std::atomic<int64_t> reconnects_{0};
  std::atomic<int64_t> stalls_{0};
  std::atomic<int64_t> last_frame_ns_{0};  // steady clock
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;  // guards error_, decoder_, and the wake-up below
  std::condition_variable wake_;
  std::string error_, decoder_;
  std::mt19937 random_{std::random_device{}()};
};

}  // namespace edgefuse
