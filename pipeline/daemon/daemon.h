// The edgefuse daemon: streams decoded by GStreamer, frames scheduled onto their models, one
// event per processed frame written as JSON lines, per-stream statistics logged.
//
// Threads: one GStreamer pipeline per stream (its streaming thread only enqueues), one worker per
// model (which runs the model's thread pool), the caller's thread for supervision and logs.
// A stream that fails (cannot connect, corrupt data, decoder error) is logged and ends on its own;
// the others keep running. Stopping drains: sources stop first, then every queued frame is
// processed, so frames_in == skipped + dropped + processed holds exactly at exit.
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
#include "pipeline/video/video_source.h"

namespace edgefuse {

struct StreamReport {
  std::string name;
  int64_t frames_in = 0, skipped = 0, dropped = 0, processed = 0, failed = 0, events = 0;
  LatencySummary latency;
  std::string decoder;
  std::string error;  // why the source ended early, empty when it did not fail
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
  void log_stats(bool final_summary);
  void shut_down();

  DaemonConfig config_;
  std::unique_ptr<JsonLinesSink> sink_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::unique_ptr<Model>> models_;
  std::atomic<bool> sink_failed_{false};
  bool shut_down_ = false;
};

}  // namespace edgefuse
