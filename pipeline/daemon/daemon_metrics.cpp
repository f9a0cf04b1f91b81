// What the daemon reports about itself: the /metrics page (Prometheus text), and the verdicts
// behind /healthz (the supervision loop is turning) and /readyz (models loaded, every stream
// streaming). Everything is read from live counters at scrape time; nothing here mutates state.
#include <chrono>

#include "models/detect/labels.h"
#include "pipeline/daemon/daemon.h"
#include "pipeline/daemon/daemon_parts.h"
#include "pipeline/metrics/process_stats.h"
#include "pipeline/metrics/prometheus_writer.h"
#include "pipeline/video/stream_credentials.h"
#include "runtime/cpu_features.h"

namespace edgefuse {
namespace {

// The supervision loop turns every 20 ms; this long without a turn means it is stuck.
constexpr double kLoopStalledSeconds = 5;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

void Daemon::mark_loop_alive() {
  loop_heartbeat_s_.store(steady_seconds());
}

std::pair<bool, std::string> Daemon::health() const {
  const double since = steady_seconds() - loop_heartbeat_s_.load();
  if (loop_heartbeat_s_.load() == 0) return {true, "starting"};
  if (since > kLoopStalledSeconds) {
    return {false, make_message("supervision loop has not run for ", static_cast<int>(since), " s")};
  }
  return {true, "ok"};
}

std::pair<bool, std::string> Daemon::readiness() const {
  const std::shared_lock lock(topology_mutex_);
  if (!running_.load()) return {false, "not ready: starting"};
  std::string waiting;
  for (const auto& stream : streams_) {
    const StreamState state = stream->supervisor->state();
    if (state == StreamState::kStreaming) continue;
    waiting += make_message(waiting.empty() ? "" : ", ", stream->config.name, " is ", stream_state_name(state));
  }
  if (!waiting.empty()) return {false, "not ready: " + waiting};
  return {true, make_message("ready: ", models_.size(), " model(s) loaded, ", streams_.size(), " stream(s) streaming")};
}

std::string Daemon::render_metrics() const {
  PrometheusWriter out;
  out.family("edgefuse_build_info", MetricType::kGauge, "Version and the CPU instruction set in use (value 1).");
  out.sample("edgefuse_build_info",
             {{"version", EDGEFUSE_VERSION}, {"cpu_isa", std::string(cpu_isa_name(active_cpu_isa()))}}, 1);

  const std::shared_lock lock(topology_mutex_);
  struct Counter {
    const char* name;
    const char* help;
    std::atomic<int64_t> StreamStats::*member;
  };
  const Counter counters[] = {
      {"edgefuse_stream_frames_total", "Decoded frames that reached the daemon.", &StreamStats::frames_in},
      {"edgefuse_stream_processed_frames_total", "Frames run through the model.", &StreamStats::processed},
      {"edgefuse_stream_dropped_frames_total", "Frames pushed out of a full queue (the oldest goes).",
       &StreamStats::dropped},
      {"edgefuse_stream_skipped_frames_total", "Frames not due under inference-interval, or still (motion-gate).",
       &StreamStats::skipped},
      {"edgefuse_stream_still_frames_total", "Due frames skipped because nothing moved (motion-gate).",
       &StreamStats::still},
      {"edgefuse_stream_failed_frames_total", "Processed frames whose preprocessing or inference failed.",
       &StreamStats::failed},
      {"edgefuse_stream_events_total", "Detection events written.", &StreamStats::events},
      {"edgefuse_stream_track_events_total", "Track events written (events.tracks): tracks ended or stopped.",
       &StreamStats::track_events},
      {"edgefuse_stream_tracks_started_total", "Object tracks begun (each a new track_id, confirmed or not).",
       &StreamStats::tracks_started},
  };
  for (const Counter& counter : counters) {
    out.family(counter.name, MetricType::kCounter, counter.help);
    for (const auto& stream : streams_) {
      out.sample(counter.name, {{"stream", stream->config.name}},
                 static_cast<double>((stream->stats.*counter.member).load()));
    }
  }
  out.family("edgefuse_stream_tracks", MetricType::kGauge, "Objects tracked now (confirmed or not).");
  for (const auto& stream : streams_) {
    out.sample("edgefuse_stream_tracks", {{"stream", stream->config.name}},
               static_cast<double>(stream->stats.tracks.load()));
  }
  out.family("edgefuse_stream_detections_dropped_total", MetricType::kCounter,
             "Detections dropped by the stream's masks and object filters, by the first bound they failed.");
  for (const auto& stream : streams_) {
    for (size_t reason = 0; reason < kDropReasons; ++reason) {
      out.sample(
          "edgefuse_stream_detections_dropped_total",
          {{"stream", stream->config.name}, {"reason", std::string(drop_reason_name(static_cast<DropReason>(reason)))}},
          static_cast<double>(stream->stats.detections_dropped[reason].load()));
    }
  }
  struct StreamZones {
    const Stream* stream;
    ZoneTotals totals;  // one consistent copy
  };
  std::vector<StreamZones> zone_totals;
  for (const auto& stream : streams_) {
    if (!stream->zones.empty()) zone_totals.push_back({stream.get(), stream->zones.totals()});
  }
  out.family("edgefuse_zone_objects", MetricType::kGauge, "Objects standing in the zone on the last processed frame.");
  for (const auto& [stream, totals] : zone_totals) {
    for (size_t z = 0; z < totals.occupancy.size(); ++z) {
      out.sample("edgefuse_zone_objects", {{"stream", stream->config.name}, {"zone", totals.zone_names[z]}},
                 totals.occupancy[z]);
    }
  }
  out.family("edgefuse_zone_class_objects", MetricType::kGauge,
             "Objects of the class standing in the zone on the last processed frame (classes seen there so far).");
  for (const auto& [stream, totals] : zone_totals) {
    const std::vector<std::string>& labels = stream->model->runner->labels();
    for (size_t z = 0; z < totals.class_counts.size(); ++z) {
      for (const ClassCount& entry : totals.class_counts[z]) {
        out.sample("edgefuse_zone_class_objects",
                   {{"stream", stream->config.name},
                    {"zone", totals.zone_names[z]},
                    {"class", label_for(labels, entry.class_id)}},
                   entry.count);
      }
    }
  }
  const auto zone_counter = [&](const char* family, const char* help, std::vector<int64_t> ZoneTotals::*counts) {
    out.family(family, MetricType::kCounter, help);
    for (const auto& [stream, totals] : zone_totals) {
      for (size_t z = 0; z < (totals.*counts).size(); ++z) {
        out.sample(family, {{"stream", stream->config.name}, {"zone", totals.zone_names[z]}},
                   static_cast<double>((totals.*counts)[z]));
      }
    }
  };
  zone_counter("edgefuse_zone_entries_total", "Tracked objects that entered the zone.", &ZoneTotals::entries);
  zone_counter("edgefuse_zone_loiterings_total", "Tracked objects that stayed in the zone its loiter-s seconds.",
               &ZoneTotals::loiterings);
  out.family("edgefuse_zone_dwell_seconds", MetricType::kHistogram,
             "How long tracked objects stood in the zone, per stay that ended (stream seconds).");
  for (const auto& stream : streams_) {
    const std::vector<std::string>& names = stream->zones.zone_names();
    for (size_t z = 0; z < stream->zone_dwell_s.size(); ++z) {
      out.histogram("edgefuse_zone_dwell_seconds", {{"stream", stream->config.name}, {"zone", names[z]}},
                    stream->zone_dwell_s[z]->snapshot());
    }
  }
  out.family("edgefuse_line_crossings_total", MetricType::kCounter,
             "Tracked objects that crossed the counting line, by direction (forward, backward).");
  for (const auto& [stream, totals] : zone_totals) {
    for (size_t l = 0; l < totals.crossings.size(); ++l) {
      for (const CrossingDirection direction : {CrossingDirection::kForward, CrossingDirection::kBackward}) {
        out.sample("edgefuse_line_crossings_total",
                   {{"stream", stream->config.name},
                    {"line", totals.line_names[l]},
                    {"direction", crossing_direction_name(direction)}},
                   static_cast<double>(totals.crossings[l][static_cast<size_t>(direction)]));
      }
    }
  }
  out.family("edgefuse_stream_fps", MetricType::kGauge, "Decoded frames per second over the last 5 s.");
  for (const auto& stream : streams_)
    out.sample("edgefuse_stream_fps", {{"stream", stream->config.name}}, stream->stats.fps.load());
  out.family("edgefuse_stream_latency_ms", MetricType::kHistogram,
             "Glass to event: from a frame's capture time to its event, milliseconds.");
  for (const auto& stream : streams_) {
    out.histogram("edgefuse_stream_latency_ms", {{"stream", stream->config.name}}, stream->stats.latency_ms.snapshot());
  }
  out.family("edgefuse_stream_reconnects_total", MetricType::kCounter, "Sources rebuilt after a failure or stall.");
  for (const auto& stream : streams_) {
    out.sample("edgefuse_stream_reconnects_total", {{"stream", stream->config.name}},
               static_cast<double>(stream->supervisor->reconnects()));
  }
  out.family("edgefuse_stream_stalls_total", MetricType::kCounter,
             "Times the watchdog found no decoded frame for watchdog-s and rebuilt the source.");
  for (const auto& stream : streams_) {
    out.sample("edgefuse_stream_stalls_total", {{"stream", stream->config.name}},
               static_cast<double>(stream->supervisor->stalls()));
  }
  out.family("edgefuse_stream_state", MetricType::kGauge, "1 for the stream's current supervision state, else 0.");
  for (const auto& stream : streams_) {
    const StreamState current = stream->supervisor->state();
    for (int state = 0; state < kStreamStateCount; ++state) {
      const auto candidate = static_cast<StreamState>(state);
      out.sample("edgefuse_stream_state", {{"stream", stream->config.name}, {"state", stream_state_name(candidate)}},
                 candidate == current ? 1 : 0);
    }
  }
  out.family("edgefuse_stream_seconds_since_frame", MetricType::kGauge,
             "Seconds since the stream's last decoded frame (what the watchdog measures).");
  for (const auto& stream : streams_) {
    out.sample("edgefuse_stream_seconds_since_frame", {{"stream", stream->config.name}},
               stream->supervisor->seconds_since_frame());
  }

  out.family("edgefuse_model_inference_ms", MetricType::kHistogram,
             "One inference call (preprocessing, the model, decoding; a whole batch), milliseconds.");
  for (const auto& model : models_) {
    out.histogram("edgefuse_model_inference_ms", {{"model", model->config.name}}, model->inference_ms.snapshot());
  }
  out.family("edgefuse_model_batch_size", MetricType::kHistogram, "Frames per inference call.");
  for (const auto& model : models_) {
    out.histogram("edgefuse_model_batch_size", {{"model", model->config.name}}, model->batch_size.snapshot());
  }
  out.family("edgefuse_model_queued_frames", MetricType::kGauge, "Frames waiting for the model.");
  for (const auto& model : models_) {
    out.sample("edgefuse_model_queued_frames", {{"model", model->config.name}},
               static_cast<double>(model->scheduler->queued()));
  }
  render_output_metrics(out);

  if (Result<ProcessStats> process = read_process_stats(); process.is_ok()) {
    out.family("process_resident_memory_bytes", MetricType::kGauge, "Resident memory size in bytes.");
    out.sample("process_resident_memory_bytes", {}, static_cast<double>(process->resident_bytes));
    out.family("process_virtual_memory_bytes", MetricType::kGauge, "Virtual memory size in bytes.");
    out.sample("process_virtual_memory_bytes", {}, static_cast<double>(process->virtual_bytes));
    out.family("process_open_fds", MetricType::kGauge, "Open file descriptors.");
    out.sample("process_open_fds", {}, static_cast<double>(process->open_fds));
    out.family("process_threads", MetricType::kGauge, "Threads in the process.");
    out.sample("process_threads", {}, static_cast<double>(process->threads));
    out.family("process_cpu_seconds_total", MetricType::kCounter, "User and system CPU time, seconds.");
    out.sample("process_cpu_seconds_total", {}, process->cpu_seconds);
    out.family("process_start_time_seconds", MetricType::kGauge, "Start time since the Unix epoch, seconds.");
    out.sample("process_start_time_seconds", {}, process->start_time_seconds);
  }
  // Stream names and labels come from the config; a password cannot be among them, but make sure.
  return scrub_secrets(out.take());
}

}  // namespace edgefuse
