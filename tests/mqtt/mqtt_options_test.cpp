// MqttOptions validation and the topic scheme (no broker needed).
#include "pipeline/mqtt/mqtt_options.h"

#include <doctest/doctest.h>

#include "pipeline/mqtt/reconnect_backoff.h"

namespace edgefuse {
namespace {

TEST_CASE("mqtt: event topics are <prefix>/<stream>/events and stream names must be one topic level") {
  auto topic = mqtt_event_topic("edgefuse", "cam-1");
  REQUIRE(topic.is_ok());
  CHECK(*topic == "edgefuse/cam-1/events");
  CHECK(*mqtt_event_topic("site/a", "door") == "site/a/door/events");
  for (const char* bad : {"", "a/b", "a+", "#"}) {
    CAPTURE(bad);
    CHECK_FALSE(mqtt_event_topic("edgefuse", bad).is_ok());
  }
}

TEST_CASE("mqtt: options are validated with messages naming the field") {
  MqttOptions options;
  options.spool.dir = "/tmp/unused";
  CHECK(validate_mqtt_options(options).is_ok());
  auto message_of = [](const MqttOptions& bad) { return validate_mqtt_options(bad).message(); };
  MqttOptions bad = options;
  bad.port = 0;
  CHECK(message_of(bad).find("port") != std::string::npos);
  bad = options;
  bad.cert_file = "/etc/hostname";
  CHECK(message_of(bad).find("key_file") != std::string::npos);
  bad = options;
  bad.ca_file = "/nonexistent/ca.pem";
  CHECK(message_of(bad).find("ca_file '/nonexistent/ca.pem'") != std::string::npos);
  bad = options;
  bad.topic_prefix = "edgefuse/#";
  CHECK(message_of(bad).find("topic_prefix") != std::string::npos);
  bad = options;
  bad.keepalive_s = 1;
  CHECK(message_of(bad).find("keepalive_s") != std::string::npos);
  bad = options;
  bad.password = "secret-password";
  CHECK(message_of(bad).find("username") != std::string::npos);
  CHECK(message_of(bad).find("secret-password") == std::string::npos);
}

TEST_CASE("mqtt: reconnect delays follow 1, 2, 5, 10, 30 s with +-20% jitter and restart after a success") {
  ReconnectBackoff backoff(7);
  const double expected[] = {1, 2, 5, 10, 30, 30, 30};
  for (double seconds : expected) {
    const double delay = static_cast<double>(backoff.next_delay().count()) / 1000.0;
    CHECK(delay >= seconds * 0.8);
    CHECK(delay <= seconds * 1.2);
  }
  backoff.reset();
  CHECK(backoff.next_delay().count() <= 1200);
}

}  // namespace
}  // namespace edgefuse
