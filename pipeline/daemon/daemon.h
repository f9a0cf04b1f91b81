// The edgefuse daemon: streams decoded by GStreamer, frames scheduled onto their models, one
// event per processed frame written as JSON lines, per-stream statistics logged.
//
// Threads: one GStreamer pipeline per stream (its streaming thread only enqueues), one worker per
// model (which runs the model's thread pool), the caller's thread for supervision and logs.
// Each stream is supervised (stream_supervisor.h): a failure or stall rebuilds only that stream's
// source, with backoff; every state change is logged and emitted as an event. The others keep running. Stopping drains:
// sources stop first, then every queued frame is processed, so frames_in == skipped + dropped + processed holds exactly
// at exit.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/config/config.h"
#include "pipeline/daemon/event_sink.h"
#include "pipeline/daemon/frame_scheduler.h"
#include "pipeline/daemon/model_runner.h"
#include "pipeline/daemon/stream_stats.h"
#include "pipeline/daemon/stream_supervisor.h"

namespace edgefuse {

struct StreamReport {
  std::string name;
  int64_t frames_in = 0, skipped = 0, dropped = 0, processed = 0, failed = 0, events = 0;
  LatencySummary latency;
  std::string decoder;
  std::string error;  // the last error of its source (empty when none failed)
  int64_t reconnects = 0;
  std::string state;  // connecting, streaming, stalled, backoff, ended, failed
};

class Daemon {
 public:
  // Loads every model and builds every stream's pipeline. A model that cannot load is an error
  // (the config names it); so is a pipeline GStreamer cannot build.
  static Result<std::unique_ptr<Daemon>> create(const DaemonConfig& config);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Runs until `stop` becomes true, `duration_s` passes, or every stream has ended; then drains.
  // Errors only when no stream could start or events cannot be written.
  Status run(const std::atomic<bool>& stop, std::optional<double> duration_s = std::nullopt);

  std::vector<StreamReport> reports() const;

 private:
  struct Stream;
  struct Model;
  Daemon() = default;
  void model_worker(Model& model);
  // Counts a processed frame and writes its event.
  void publish(Model& model, const PendingFrame& pending, Result<std::vector<Detection>> detected);
  void on_state_change(size_t stream_index, const StateChange& change);
  // Writes one event line to every output; false (and the daemon stops) when the events file failed.
  bool emit(const std::string& stream, const std::string& json);
  std::string next_event_id();
  void log_stats(bool final_summary);
  void shut_down();

  DaemonConfig config_;
  std::string run_id_;
  std::atomic<int64_t> event_sequence_{0};
  std::unique_ptr<JsonLinesSink> sink_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::unique_ptr<Model>> models_;
  std::atomic<bool> sink_failed_{false};
  bool shut_down_ = false;
};

}  // namespace edgefuse
