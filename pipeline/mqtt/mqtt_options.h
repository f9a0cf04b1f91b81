// MqttOptions: where and how the MQTT publisher sends events. Plain data, no libmosquitto, so the
// configuration can fill it whether or not MQTT is built.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "pipeline/spool/event_spool.h"
#include "runtime/status.h"

namespace edgefuse {

struct MqttOptions {
  std::string host = "127.0.0.1";
  int port = 1883;
  std::string client_id;                  // fixed, for the persistent session; empty: "edgefuse-<hostname>"
  std::string topic_prefix = "edgefuse";  // events go to <topic_prefix>/<stream>/events
  std::string username;                   // empty: no authentication
  std::string password;                   // never logged, never in an error message
  std::string ca_file;                    // TLS is on when ca_file or cert_file is set
  std::string cert_file;                  // client certificate (with key_file) for mutual TLS
  std::string key_file;
  bool tls_insecure = false;  // skip the broker host name check (testing only)
  int keepalive_s = 30;
  int max_inflight = 20;  // QoS 1 messages sent and not yet acknowledged
  SpoolOptions spool;     // the on-disk queue every event passes through
  // One line per call, from the publisher's thread and from publish() callers (the spool's lines,
  // prefixed "spool: ", when spool.log is empty); empty: stderr with an "edgefuse: mqtt: " prefix.
  std::function<void(std::string)> log;
};

// Checks ranges, topic characters and that TLS files exist; messages name the field.
Status validate_mqtt_options(const MqttOptions& options);

// "<prefix>/<stream>/events"; a stream name must be non-empty without '/', '+', '#' or NUL.
Result<std::string> mqtt_event_topic(std::string_view topic_prefix, std::string_view stream);
// <topic_prefix>/<stream>/<subtopic> for a retained state value ("zones/path"): the same checks
// on the stream, and a subtopic of non-empty levels without wildcards.
Result<std::string> mqtt_state_topic(std::string_view topic_prefix, std::string_view stream, std::string_view subtopic);

}  // namespace edgefuse
