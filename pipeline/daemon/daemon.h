// The edgefuse daemon: streams decoded by GStreamer, frames scheduled onto their models, one
// event per processed frame written as JSON lines, per-stream statistics logged.
//
// Threads: one GStreamer pipeline per stream (its streaming thread only enqueues) watched by its
// supervisor thread, one worker per model (which runs the model's thread pool), and the thread
// that called run() for statistics, reloads and systemd notifications.
// Each stream is supervised (stream_supervisor.h): a failure or stall rebuilds only that stream's
// source, with backoff; every state change is logged and emitted as an event. The others keep
// running. Stopping drains: sources stop first, then every queued frame is processed, so
// frames_in == skipped + dropped + processed holds exactly at exit.
// Reloading (SIGHUP, request_reload) restarts only what changed: a stream whose keys changed, a
// model whose keys changed (with its streams); a new config that cannot be applied (a model that
// does not load, a pipeline that cannot be built) is rejected whole and the running one stays.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/config/config.h"
#include "pipeline/daemon/event_sink.h"
#include "pipeline/daemon/frame_scheduler.h"
#include "pipeline/daemon/model_runner.h"
#include "pipeline/daemon/service_notifier.h"
#include "pipeline/daemon/stream_stats.h"
#include "pipeline/daemon/stream_supervisor.h"
#include "pipeline/tracking/track_journal.h"

namespace edgefuse {

class MqttPublisher;
class PrometheusWriter;
class StatusServer;
struct ZoneActivity;

struct StreamReport {
  std::string name;
  int64_t frames_in = 0, skipped = 0, dropped = 0, processed = 0, failed = 0, events = 0;
  int64_t still = 0;  // of skipped: due, but nothing moved (motion-gate)
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
  // When `reload` becomes true it is reset and the config file is read again and applied.
  // Errors only when no stream could start or events cannot be written.
  Status run(const std::atomic<bool>& stop, std::optional<double> duration_s = std::nullopt,
             std::atomic<bool>* reload = nullptr);

  // Applies `next` on the run() thread at its next turn; the future says whether it was applied.
  // A request the run loop cannot serve (not running, or stopping first) is answered with an error.
  std::future<Status> request_reload(DaemonConfig next);

  std::vector<StreamReport> reports() const;

  // What the HTTP endpoints serve (also callable directly): the Prometheus page, every stream's
  // state and figures as JSON (/streams), and the verdicts of /healthz (the supervision loop
  // turns) and /readyz (models loaded, every stream streaming), each with a one-line reason.
  std::string render_metrics() const;
  std::string render_streams_json() const;
  std::pair<bool, std::string> health() const;
  std::pair<bool, std::string> readiness() const;

 private:
  struct Stream;
  struct Model;
  Daemon() = default;
  Result<std::unique_ptr<Model>> load_model(const ModelConfig& config) const;
  Result<std::unique_ptr<Stream>> build_stream(const StreamConfig& config, Model& model);
  void start_model(Model& model);
  void attach_stream(std::unique_ptr<Stream> stream);  // registers and starts it
  void detach_stream(const std::string& name);         // stops, drains and removes it
  void stop_model(Model& model);
  Status apply_config(const DaemonConfig& next);
  void reload_from_file();
  void serve_reload_requests();
  void set_serving_reloads(bool serving);

  void model_worker(Model& model);
  // Counts a processed frame and writes its event.
  void publish(Model& model, const PendingFrame& pending, Result<std::vector<Detection>> detected);
  void on_state_change(Stream& stream, const StateChange& change);
  // Writes one event line to every output; false (and the daemon stops) when the events file failed.
  bool emit(const std::string& stream, const std::string& json);
  // One "track" event per record (events.tracks), counted in the stream's track_events.
  void emit_track_events(Stream& stream, std::vector<TrackRecord> records);
  std::string next_event_id();
  void log_stats(bool final_summary);
  void log_final_summary(Stream& stream);
  void shut_down();
  void mark_loop_alive();
  void update_frame_rates();
  void render_output_metrics(PrometheusWriter& out) const;
  Status start_status_server();
  Status open_mqtt();
  void publish_mqtt(const std::string& stream, const std::string& json);
  void close_mqtt();
  Status open_overlay(Stream& stream);
  void submit_overlay(Stream& stream, const DecodedFrame& frame, const std::vector<Detection>& detections,
                      double latency_ms);
  void close_overlay(Stream& stream);
  // Zone counts that changed and line totals that grew, as retained MQTT values.
  void publish_zone_states(Stream& stream, const ZoneActivity& activity);
  // Queues a snapshot of the frame for the event `event_id`; its path, or empty without snapshots.
  std::string take_snapshot(Stream& stream, const DecodedFrame& frame, const std::vector<Detection>& detections,
                            const std::string& event_id);

  DaemonConfig config_;
  bool empty_frame_events_ = false;  // events.empty-frames (read by the workers; fixed for the daemon's life)
  bool track_events_ = false;        // events.tracks (likewise)
  std::string run_id_;
  std::atomic<int64_t> event_sequence_{0};
  std::unique_ptr<JsonLinesSink> sink_;
  // Streams and models change only on the run() thread, under the exclusive lock; other threads
  // (reports, metrics) read under the shared lock. Workers find their streams through Model::slots.
  mutable std::shared_mutex topology_mutex_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::unique_ptr<Model>> models_;
  std::atomic<bool> sink_failed_{false};
  std::atomic<bool> running_{false};
  std::atomic<double> loop_heartbeat_s_{0};  // steady-clock seconds of the supervision loop's last turn
  // The HTTP endpoint, when configured and built with cpp-httplib (a deleter, so this header needs
  // neither the server's type nor the library).
  std::unique_ptr<StatusServer, void (*)(StatusServer*)> status_server_{nullptr, nullptr};
  std::unique_ptr<MqttPublisher, void (*)(MqttPublisher*)> mqtt_{nullptr, nullptr};  // likewise, libmosquitto
  std::atomic<int64_t> mqtt_failures_{0};
  bool shut_down_ = false;
  ServiceNotifier notifier_;
  std::mutex reload_mutex_;
  std::vector<std::pair<DaemonConfig, std::promise<Status>>> reload_requests_;
  bool serving_reloads_ = false;  // the run loop takes requests (guarded by reload_mutex_)
};

}  // namespace edgefuse
