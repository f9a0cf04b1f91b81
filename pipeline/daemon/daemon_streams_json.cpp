// GET /streams: every stream's state and figures as one JSON object, for dashboards and scripts
// that want them without a Prometheus server. The same counters as /metrics, read the same way.
#include "models/detect/labels.h"
#include "pipeline/daemon/daemon.h"
#include "pipeline/daemon/daemon_parts.h"
#include "pipeline/json/json_writer.h"
#include "pipeline/video/stream_credentials.h"

namespace edgefuse {

namespace {

void write_zones(JsonWriter& json, const ZoneTotals& totals, const std::vector<std::string>& labels) {
  json.key("zones").begin_object();
  for (size_t z = 0; z < totals.zone_names.size(); ++z) {
    json.key(totals.zone_names[z]).begin_object();
    json.key("objects").value(totals.occupancy[z]);
    json.key("classes").begin_object();
    for (const ClassCount& entry : totals.class_counts[z]) {
      if (entry.count > 0) json.key(label_for(labels, entry.class_id)).value(entry.count);
    }
    json.end_object();
    json.key("entries").value(totals.entries[z]);
    json.key("loiterings").value(totals.loiterings[z]);
    json.end_object();
  }
  json.end_object();
  json.key("lines").begin_object();
  for (size_t l = 0; l < totals.line_names.size(); ++l) {
    json.key(totals.line_names[l]).begin_object();
    json.key("forward").value(totals.crossings[l][0]);
    json.key("backward").value(totals.crossings[l][1]);
    json.end_object();
  }
  json.end_object();
}

}  // namespace

std::string Daemon::render_streams_json() const {
  JsonWriter json;
  json.begin_object().key("streams").begin_array();
  const std::shared_lock lock(topology_mutex_);
  for (const auto& stream : streams_) {
    const StreamStats& stats = stream->stats;
    json.begin_object();
    json.key("name").value(stream->config.name);
    json.key("state").value(stream_state_name(stream->supervisor->state()));
    json.key("uri").value(redact_uri(stream->config.uri));
    json.key("model").value(stream->config.model);
    json.key("decoder").value(stream->supervisor->decoder_name());
    json.key("fps").value(stats.fps.load(), 2);
    json.key("seconds_since_frame").value(stream->supervisor->seconds_since_frame(), 3);
    const std::pair<const char*, const std::atomic<int64_t>*> counters[] = {
        {"frames_in", &stats.frames_in}, {"processed", &stats.processed},       {"skipped", &stats.skipped},
        {"still", &stats.still},         {"dropped", &stats.dropped},           {"failed", &stats.failed},
        {"events", &stats.events},       {"track_events", &stats.track_events}, {"tracks", &stats.tracks}};
    for (const auto& [name, counter] : counters) json.key(name).value(counter->load());
    json.key("reconnects").value(stream->supervisor->reconnects());
    json.key("stalls").value(stream->supervisor->stalls());
    const HistogramSnapshot latency = stats.latency_ms.snapshot();
    json.key("latency_ms").begin_object();
    json.key("count").value(static_cast<int64_t>(latency.count));
    json.key("mean").value(latency.count > 0 ? latency.sum / static_cast<double>(latency.count) : 0.0, 2);
    json.end_object();
    json.key("detections_dropped").begin_object();
    for (size_t reason = 0; reason < kDropReasons; ++reason) {
      json.key(drop_reason_name(static_cast<DropReason>(reason))).value(stats.detections_dropped[reason].load());
    }
    json.end_object();
    if (!stream->zones.empty()) write_zones(json, stream->zones.totals(), stream->model->runner->labels());
    const std::string error = stream->supervisor->last_error();
    if (!error.empty()) json.key("error").value(error);
    json.end_object();
  }
  json.end_array().end_object();
  return scrub_secrets(json.str());  // an error may quote what a camera sent back
}

}  // namespace edgefuse
