// The daemon's MQTT output: every event is handed to the MqttPublisher (spooled on disk until the
// broker acknowledges it) before it is written to the events file, so an event in the file is
// never missing from the broker's side. Built only with libmosquitto (pipeline/mqtt).
#include <algorithm>

#include "models/detect/labels.h"
#include "pipeline/daemon/daemon.h"
#include "pipeline/daemon/daemon_log.h"
#include "pipeline/daemon/daemon_parts.h"
#include "pipeline/metrics/prometheus_writer.h"

#if EDGEFUSE_HAVE_MQTT
#include "pipeline/mqtt/mqtt_publisher.h"
#endif

namespace edgefuse {
namespace {

// A broker that is still down at exit keeps the rest in the spool for the next start.
constexpr std::chrono::seconds kFlushAtExit{5};

}  // namespace

Status Daemon::open_mqtt() {
  if (!config_.mqtt.enabled) return Status::ok();
#if EDGEFUSE_HAVE_MQTT
  const MqttConfig& config = config_.mqtt;
  MqttOptions options;
  options.host = config.host;
  options.port = config.port;
  options.client_id = config.client_id;
  options.topic_prefix = config.topic_prefix;
  options.username = config.username;
  options.password = config.password;
  options.ca_file = config.ca_file.string();
  options.cert_file = config.cert_file.string();
  options.key_file = config.key_file.string();
  options.tls_insecure = config.tls_insecure;
  options.keepalive_s = config.keepalive_s;
  options.max_inflight = config.max_inflight;
  options.spool.dir = config.spool_dir;
  options.spool.max_bytes = static_cast<int64_t>(config.spool_max_mb) << 20;
  options.spool.fsync = config.spool_fsync;
  options.log = [](std::string line) { daemon_log("mqtt: ", line); };
  Result<std::unique_ptr<MqttPublisher>> publisher = MqttPublisher::create(std::move(options));
  if (!publisher.is_ok()) return publisher.status().with_context("mqtt");
  mqtt_ = {publisher->release(), [](MqttPublisher* closing) { delete closing; }};
  daemon_log("mqtt: publishing to ", config.host, ":", config.port, " as '", config.client_id, "', topics ",
             config.topic_prefix, "/<stream>/events, spool ", config.spool_dir);
  return Status::ok();
#else
  return unsupported("mqtt: this edgefuse was built without libmosquitto (apt install libmosquitto-dev, rebuild)");
#endif
}

void Daemon::publish_mqtt(const std::string& stream, const std::string& json) {
#if EDGEFUSE_HAVE_MQTT
  if (!mqtt_) return;
  const Status spooled = mqtt_->publish(stream, json);
  if (spooled.is_ok()) return;
  // The event still reaches the events file; say so, but not for every event of a full disk.
  if (mqtt_failures_.fetch_add(1) < 5) daemon_log("mqtt: event not spooled: ", spooled.message());
#else
  (void)stream;
  (void)json;
#endif
}

void Daemon::publish_zone_states(Stream& stream, const ZoneActivity& activity) {
#if EDGEFUSE_HAVE_MQTT
  if (!mqtt_) return;
  const bool first = stream.zone_counts_published.empty();
  const std::vector<Zone>& zones = stream.zones.zones();
  stream.zone_counts_published.resize(zones.size(), -1);
  stream.zone_class_counts_published.resize(zones.size());
  const std::vector<std::string>& labels = stream.model->runner->labels();
  const ZoneTotals totals = stream.zones.totals();  // per zone every class seen there, 0 once gone
  for (size_t z = 0; z < zones.size(); ++z) {
    if (activity.occupancy[z] != stream.zone_counts_published[z]) {
      stream.zone_counts_published[z] = activity.occupancy[z];
      (void)mqtt_->publish_state(stream.config.name, "zones/" + zones[z].name, std::to_string(activity.occupancy[z]));
    }
    std::vector<ClassCount>& published = stream.zone_class_counts_published[z];
    for (const ClassCount& entry : totals.class_counts[z]) {
      const auto before = std::find_if(published.begin(), published.end(),
                                       [&](const ClassCount& old) { return old.class_id == entry.class_id; });
      if (before != published.end() && before->count == entry.count) continue;
      (void)mqtt_->publish_state(stream.config.name, "zones/" + zones[z].name + "/" + label_for(labels, entry.class_id),
                                 std::to_string(entry.count));
      if (before != published.end()) {
        before->count = entry.count;
      } else {
        published.push_back(entry);
      }
    }
  }
  if (!first && activity.crossings.empty()) return;
  for (size_t l = 0; l < totals.line_names.size(); ++l) {
    for (const CrossingDirection direction : {CrossingDirection::kForward, CrossingDirection::kBackward}) {
      const std::string subtopic = "lines/" + totals.line_names[l] + "/" + crossing_direction_name(direction);
      (void)mqtt_->publish_state(stream.config.name, subtopic,
                                 std::to_string(totals.crossings[l][static_cast<size_t>(direction)]));
    }
  }
#else
  (void)stream;
  (void)activity;
#endif
}

void Daemon::close_mqtt() {
#if EDGEFUSE_HAVE_MQTT
  if (!mqtt_) return;
  const Status flushed = mqtt_->close(kFlushAtExit);
  if (!flushed.is_ok()) daemon_log("mqtt: ", flushed.message());
  const MqttCounters counters = mqtt_->counters();
  daemon_log("mqtt summary: published ", counters.published, ", acknowledged ", counters.acknowledged, ", republished ",
             counters.republished, ", replayed from the spool ", counters.replayed, ", left in the spool ",
             counters.spool_depth, ", dropped by the spool bound ", counters.spool_dropped);
  mqtt_.reset();
#endif
}

void Daemon::render_output_metrics(PrometheusWriter& out) const {
#if EDGEFUSE_HAVE_MQTT
  if (!mqtt_) return;
  const MqttCounters counters = mqtt_->counters();
  out.family("edgefuse_mqtt_connected", MetricType::kGauge, "1 while connected to the broker.");
  out.sample("edgefuse_mqtt_connected", {}, counters.connected ? 1 : 0);
  out.family("edgefuse_mqtt_published_total", MetricType::kCounter, "PUBLISH packets sent, resends included.");
  out.sample("edgefuse_mqtt_published_total", {}, static_cast<double>(counters.published));
  out.family("edgefuse_mqtt_acknowledged_total", MetricType::kCounter, "Events the broker acknowledged (QoS 1).");
  out.sample("edgefuse_mqtt_acknowledged_total", {}, static_cast<double>(counters.acknowledged));
  out.family("edgefuse_mqtt_republished_total", MetricType::kCounter, "Events sent again after a reconnect.");
  out.sample("edgefuse_mqtt_republished_total", {}, static_cast<double>(counters.republished));
  out.family("edgefuse_mqtt_states_published_total", MetricType::kCounter,
             "Retained state values sent (zone counts, line crossings), resends included.");
  out.sample("edgefuse_mqtt_states_published_total", {}, static_cast<double>(counters.states_published));
  out.family("edgefuse_mqtt_reconnects_total", MetricType::kCounter, "Connections to the broker after the first.");
  out.sample("edgefuse_mqtt_reconnects_total", {}, static_cast<double>(counters.reconnects));
  out.family("edgefuse_spool_depth", MetricType::kGauge, "Events on disk waiting for the broker's acknowledgement.");
  out.sample("edgefuse_spool_depth", {}, static_cast<double>(counters.spool_depth));
  out.family("edgefuse_spool_bytes", MetricType::kGauge, "Bytes of the spool's segment files.");
  out.sample("edgefuse_spool_bytes", {}, static_cast<double>(counters.spool_bytes));
  out.family("edgefuse_spool_dropped_total", MetricType::kCounter,
             "Events dropped, oldest first, because the spool reached spool-max-mb.");
  out.sample("edgefuse_spool_dropped_total", {}, static_cast<double>(counters.spool_dropped));
#else
  (void)out;
#endif
}

}  // namespace edgefuse
