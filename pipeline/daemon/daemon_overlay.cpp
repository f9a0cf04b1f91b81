// A stream's drawn outputs from its config keys: the overlay (overlay-file, overlay-port), the
// processed frames with their detections drawn, recorded to MP4 and/or served live; and its
// snapshots (snapshots, snapshots-max-mb). Built only with the overlay library (GStreamer +
// cpp-httplib).
#include "pipeline/daemon/daemon.h"
#include "pipeline/daemon/daemon_log.h"
#include "pipeline/daemon/daemon_parts.h"

#if EDGEFUSE_HAVE_OVERLAY
#include "pipeline/overlay/overlay_output.h"
#include "pipeline/overlay/snapshot_writer.h"
#endif

namespace edgefuse {

Status Daemon::open_overlay(Stream& stream) {
  const StreamConfig& config = stream.config;
  if (config.overlay_file.empty() && config.overlay_port == 0 && config.snapshots.empty()) return Status::ok();
#if EDGEFUSE_HAVE_OVERLAY
  if (!config.snapshots.empty()) {
    SnapshotOptions snapshots;
    snapshots.folder = std::filesystem::path(config.snapshots) / config.name;
    snapshots.max_bytes = static_cast<int64_t>(config.snapshots_max_mb) * 1'000'000;
    snapshots.text.labels = stream.model->runner->labels();
    snapshots.text.zones = stream.zones.zones();
    snapshots.text.lines = stream.zones.lines();
    snapshots.text.masks = stream.object_filter.masks();
    Result<std::unique_ptr<SnapshotWriter>> writer = SnapshotWriter::create(std::move(snapshots));
    if (!writer.is_ok()) return writer.status().with_context(make_message("stream '", config.name, "'"));
    stream.snapshots = {writer->release(), [](SnapshotWriter* closing) { delete closing; }};
    daemon_log("stream '", config.name, "': snapshots to ",
               (std::filesystem::path(config.snapshots) / config.name).string());
  }
  if (config.overlay_file.empty() && config.overlay_port == 0) return Status::ok();
  OverlayOptions options;
  options.stream_name = config.name;
  options.labels = stream.model->runner->labels();
  options.zones = stream.zones.zones();
  options.lines = stream.zones.lines();
  options.masks = stream.object_filter.masks();
  options.mp4_path = config.overlay_file;
  options.http_port = config.overlay_port > 0 ? config.overlay_port : -1;
  options.bind_address = config_.http.address;
  if (config.framerate > 0) options.fps = config.framerate;
  Result<std::unique_ptr<OverlayOutput>> output = OverlayOutput::create(std::move(options));
  if (!output.is_ok()) return output.status().with_context(make_message("stream '", config.name, "': overlay"));
  stream.overlay = {output->release(), [](OverlayOutput* closing) { delete closing; }};
  if (!config.overlay_file.empty())
    daemon_log("stream '", config.name, "': overlay recording to ", config.overlay_file);
  if (stream.overlay->http_port() > 0) {
    daemon_log("stream '", config.name, "': overlay live view on http://", config_.http.address, ":",
               stream.overlay->http_port(), "/");
  }
  return Status::ok();
#else
  return unsupported("stream '", config.name, "': this edgefuse was built without the overlay output");
#endif
}

void Daemon::submit_overlay(Stream& stream, const DecodedFrame& frame, const std::vector<Detection>& detections,
                            double latency_ms) {
#if EDGEFUSE_HAVE_OVERLAY
  if (!stream.overlay) return;
  OverlayStats stats{.fps = stream.stats.fps.load(), .latency_ms = latency_ms};
  if (!stream.zones.empty()) {
    ZoneTotals totals = stream.zones.totals();
    stats.zone_objects = std::move(totals.occupancy);
    stats.line_crossings = std::move(totals.crossings);
  }
  stream.overlay->submit(frame, detections, stats);
#else
  (void)stream;
  (void)frame;
  (void)detections;
  (void)latency_ms;
#endif
}

std::string Daemon::take_snapshot(Stream& stream, const DecodedFrame& frame, const std::vector<Detection>& detections,
                                  const std::string& event_id) {
#if EDGEFUSE_HAVE_OVERLAY
  if (!stream.snapshots) return {};
  return stream.snapshots->submit(frame, detections, event_id).string();
#else
  (void)stream;
  (void)frame;
  (void)detections;
  (void)event_id;
  return {};
#endif
}

void Daemon::close_overlay(Stream& stream) {
#if EDGEFUSE_HAVE_OVERLAY
  if (stream.snapshots) {
    stream.snapshots->close();
    const SnapshotCounters counters = stream.snapshots->counters();
    const Status error = stream.snapshots->error();
    daemon_log("stream '", stream.config.name, "': snapshots: ", counters.written, " written, ", counters.dropped,
               " dropped while busy, ", counters.removed, " old ones removed to stay under ",
               stream.config.snapshots_max_mb, " MB", error.is_ok() ? "" : "; " + error.message());
    stream.snapshots.reset();
  }
  if (!stream.overlay) return;
  const Status closed = stream.overlay->close();
  const OverlayCounters counters = stream.overlay->counters();
  const std::string recorded = stream.config.overlay_file.empty()
                                   ? std::string()
                                   : make_message(", recorded ", counters.written, " in ", counters.files,
                                                  counters.files == 1 ? " file" : " files",
                                                  counters.files > 1 ? " (the frame size changed)" : "");
  daemon_log("stream '", stream.config.name, "': overlay drew ", counters.drawn, " frames (", counters.dropped,
             " dropped while busy)", recorded, closed.is_ok() ? "" : "; " + closed.message());
  stream.overlay.reset();
#else
  (void)stream;
#endif
}

}  // namespace edgefuse
