// Validation of MqttOptions and the event topic scheme.
#include "pipeline/mqtt/mqtt_options.h"

#include <unistd.h>

namespace edgefuse {
namespace {

bool has_wildcard_or_nul(std::string_view text) {
  return text.find_first_of(std::string_view("+#\0", 3)) != text.npos;
}

Status check_readable(const std::string& path, const char* field) {
  if (path.empty()) return Status::ok();
  if (::access(path.c_str(), R_OK) != 0) return invalid_argument("mqtt: ", field, " '", path, "' is not readable");
  return Status::ok();
}

}  // namespace

Status validate_mqtt_options(const MqttOptions& options) {
  if (options.host.empty()) return invalid_argument("mqtt: host is empty");
  if (options.port < 1 || options.port > 65535)
    return invalid_argument("mqtt: port ", options.port, " is not 1..65535");
  if (options.keepalive_s < 5 || options.keepalive_s > 65535) {
    return invalid_argument("mqtt: keepalive_s ", options.keepalive_s, " is not 5..65535");
  }
  if (options.max_inflight < 1 || options.max_inflight > 65535) {
    return invalid_argument("mqtt: max_inflight ", options.max_inflight, " is not 1..65535");
  }
  if (options.topic_prefix.empty() || has_wildcard_or_nul(options.topic_prefix)) {
    return invalid_argument("mqtt: topic_prefix '", options.topic_prefix, "' must be non-empty without '+', '#'");
  }
  if (options.client_id.size() > 65535) return invalid_argument("mqtt: client_id is longer than 65535 bytes");
  if (options.cert_file.empty() != options.key_file.empty()) {
    return invalid_argument("mqtt: cert_file and key_file must be given together");
  }
  if (options.username.empty() && !options.password.empty()) {
    return invalid_argument("mqtt: a password needs a username");
  }
  EF_RETURN_IF_ERROR(check_readable(options.ca_file, "ca_file"));
  EF_RETURN_IF_ERROR(check_readable(options.cert_file, "cert_file"));
  EF_RETURN_IF_ERROR(check_readable(options.key_file, "key_file"));
  return Status::ok();
}

Result<std::string> mqtt_event_topic(std::string_view topic_prefix, std::string_view stream) {
  if (stream.empty() || stream.find('/') != stream.npos || has_wildcard_or_nul(stream)) {
    return invalid_argument("mqtt: stream name '", stream, "' cannot be a topic level (empty, or has '/', '+', '#')");
  }
  std::string topic;
  topic.reserve(topic_prefix.size() + stream.size() + 8);
  topic.append(topic_prefix).append("/").append(stream).append("/events");
  return topic;
}

Result<std::string> mqtt_state_topic(std::string_view topic_prefix, std::string_view stream,
                                     std::string_view subtopic) {
  EF_ASSIGN_OR_RETURN(std::string topic, mqtt_event_topic(topic_prefix, stream));
  if (subtopic.empty() || subtopic.front() == '/' || subtopic.back() == '/' || subtopic.find("//") != subtopic.npos ||
      has_wildcard_or_nul(subtopic)) {
    return invalid_argument("mqtt: '", subtopic, "' cannot be a topic below a stream (empty levels or wildcards)");
  }
  topic.resize(topic.size() - std::string_view("events").size());
  topic.append(subtopic);
  return topic;
}

}  // namespace edgefuse
