// MqttPublisher over TLS: a broker with a TLS listener (certificate generated here with the openssl
// tool, which the test needs) and a plain listener for the subscriber. The publisher verifies the
// broker against ca_file, host name check included.
#include <doctest/doctest.h>

#include <cstdlib>

#include "tests/mqtt/mqtt_test_support.h"
#include "tests/mqtt/test_subscriber.h"
#include "tests/spool/spool_test_support.h"

namespace edgefuse {
namespace {

using namespace std::chrono_literals;

// A self-signed certificate for 127.0.0.1 (as its own CA); false when openssl is missing or fails.
bool make_certificate(const std::filesystem::path& dir) {
  const std::string command =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2"
      " -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout '" +
      (dir / "key.pem").string() + "' -out '" + (dir / "cert.pem").string() + "' > '" + (dir / "openssl.log").string() +
      "' 2>&1";
  return std::system(command.c_str()) == 0;
}

TEST_CASE("mqtt: events reach the broker over TLS verified against ca_file") {
  MOSQUITTO_OR_SKIP();
  test::TempDir dir;
  if (!make_certificate(dir.path())) {
    MESSAGE("SKIPPED: could not generate a certificate with the openssl tool");
    return;
  }
  const int plain_port = test::free_loopback_port();
  const int tls_port = test::free_loopback_port();
  const std::string tls_listener = "listener " + std::to_string(tls_port) + " 127.0.0.1\ncertfile " +
                                   (dir.path() / "cert.pem").string() + "\nkeyfile " +
                                   (dir.path() / "key.pem").string() + "\n";
  test::MosquittoBroker broker(dir.path() / "broker", plain_port,
                               "allow_anonymous true\nper_listener_settings false\n" + tls_listener);
  std::string error;
  REQUIRE_MESSAGE(broker.start(error), error);
  test::TestSubscriber subscriber(plain_port, "edgefuse-test-subscriber-tls");
  REQUIRE_MESSAGE(subscriber.start(error), error);

  test::LogLines log;
  MqttOptions options = test::test_publisher_options(tls_port, dir.path() / "spool", log, "edgefuse-test-tls");
  options.ca_file = (dir.path() / "cert.pem").string();
  auto publisher = MqttPublisher::create(options);
  REQUIRE_MESSAGE(publisher.is_ok(), publisher.status().to_string());
  std::set<int64_t> expected;
  for (int64_t id = 1; id <= 50; ++id) {
    REQUIRE((*publisher)->publish("cam-tls", test::event_payload(id)).is_ok());
    expected.insert(id);
  }
  CHECK(subscriber.wait_for(expected, 20s));
  CHECK((*publisher)->close(5s).is_ok());
  CHECK((*publisher)->counters().acknowledged == 50);
  (*publisher).reset();

  // The same broker through a CA that did not sign it: refused by the publisher, events stay spooled.
  test::TempDir other;
  REQUIRE(make_certificate(other.path()));
  test::LogLines wrong_log;
  MqttOptions wrong = test::test_publisher_options(tls_port, dir.path() / "spool", wrong_log, "edgefuse-test-tls");
  wrong.ca_file = (other.path() / "cert.pem").string();
  auto untrusting = MqttPublisher::create(wrong);
  REQUIRE(untrusting.is_ok());
  REQUIRE((*untrusting)->publish("cam-tls", test::event_payload(51)).is_ok());
  CHECK(test::wait_until([&] { return !(*untrusting)->counters().last_error.empty(); }, 10s));
  CHECK_FALSE((*untrusting)->counters().connected);
  CHECK((*untrusting)->counters().spool_depth == 1);
  MESSAGE("with the wrong CA: " << (*untrusting)->counters().last_error);
}

}  // namespace
}  // namespace edgefuse
