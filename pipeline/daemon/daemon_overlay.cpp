// A stream's overlay output from its config keys (overlay-file, overlay-port): the processed frames
// with their detections drawn, recorded to MP4 and/or served live. Built only with the overlay
// library (GStreamer + cpp-httplib).
#include "pipeline/daemon/daemon.h"
#include "pipeline/daemon/daemon_log.h"
#include "pipeline/daemon/daemon_parts.h"

#if EDGEFUSE_HAVE_OVERLAY
#include "pipeline/overlay/overlay_output.h"
#endif

namespace edgefuse {

Status Daemon::open_overlay(Stream& stream) {
  const StreamConfig& config = stream.config;
  if (config.overlay_file.empty() && config.overlay_port == 0) return Status::ok();
#if EDGEFUSE_HAVE_OVERLAY
  OverlayOptions options;
  options.stream_name = config.name;
  options.labels = stream.model->runner->labels();
  options.zones = stream.zones.zones();
  options.lines = stream.zones.lines();
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

void Daemon::close_overlay(Stream& stream) {
#if EDGEFUSE_HAVE_OVERLAY
  if (!stream.overlay) return;
  const Status closed = stream.overlay->close();
  const OverlayCounters counters = stream.overlay->counters();
  daemon_log("stream '", stream.config.name, "': overlay drew ", counters.drawn, " frames (", counters.dropped,
             " dropped while busy)", closed.is_ok() ? "" : "; " + closed.message());
  stream.overlay.reset();
#else
  (void)stream;
#endif
}

}  // namespace edgefuse
