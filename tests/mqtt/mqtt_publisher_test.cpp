// MqttPublisher against a real mosquitto broker: every event arrives; broker restarts while events
// flow lose none of them (SIGTERM: strictly none; SIGKILL: none the broker had saved); credentials
// never reach a log line.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "tests/mqtt/mqtt_test_support.h"
#include "tests/mqtt/test_subscriber.h"
#include "tests/spool/spool_test_support.h"

namespace edgefuse {
namespace {

using namespace std::chrono_literals;
using test::LogLines;
using test::MosquittoBroker;
using test::TestSubscriber;

TEST_CASE("mqtt: every published event reaches a QoS 1 subscriber and is acknowledged in the spool") {
  MOSQUITTO_OR_SKIP();
  test::TempDir dir;
  const int port = test::free_loopback_port();
  MosquittoBroker broker(dir.path() / "broker", port, test::persistent_broker_config(dir.path() / "broker"));
  std::string error;
  REQUIRE_MESSAGE(broker.start(error), error);
  TestSubscriber subscriber(port, "edgefuse-test-subscriber-a");
  REQUIRE_MESSAGE(subscriber.start(error), error);

  LogLines log;
  auto publisher =
      MqttPublisher::create(test::test_publisher_options(port, dir.path() / "spool", log, "edgefuse-test-a"));
  REQUIRE_MESSAGE(publisher.is_ok(), publisher.status().to_string());
  const int events = 500;
  const auto started = std::chrono::steady_clock::now();
  std::set<int64_t> expected;
  for (int64_t id = 1; id <= events; ++id) {
    REQUIRE((*publisher)->publish(id % 2 ? "cam-1" : "cam-2", test::event_payload(id)).is_ok());
    expected.insert(id);
  }
  CHECK_FALSE((*publisher)->publish("bad/stream", "x").is_ok());
  CHECK(subscriber.wait_for(expected, 30s));
  const auto delivered_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  const Status closed = (*publisher)->close(10s);
  CHECK_MESSAGE(closed.is_ok(), closed.to_string());
  const MqttCounters counters = (*publisher)->counters();
  CHECK(counters.acknowledged == events);
  CHECK(counters.published == events);
  CHECK(counters.republished == 0);
  CHECK(counters.spool_depth == 0);
  CHECK(counters.spool_dropped == 0);
  CHECK(counters.last_error.empty());
  CHECK(subscriber.topics() == std::set<std::string>{"edgefuse/cam-1/events", "edgefuse/cam-2/events"});
  CHECK(log.any_contains("connected to 127.0.0.1:" + std::to_string(port)));
  MESSAGE(events << " events spooled and delivered in " << delivered_ms
                 << " ms; duplicates received: " << subscriber.duplicates());
}

struct RestartOutcome {
  int64_t produced = 0;
  int64_t missing = 0;
  int64_t duplicates = 0;
  MqttCounters counters;
};

// Events flow from a producer thread (about 250 a second, as the daemon's event sink would send
// them) while the broker is stopped and restarted `restarts` times, each time while both clients are
// connected and events are in flight. Returns once every event arrived or 30 s passed.
RestartOutcome run_with_broker_restarts(bool hard_kill, int restarts, const std::string& name) {
  RestartOutcome outcome;
  test::TempDir dir;
  const int port = test::free_loopback_port();
  const auto broker_dir = dir.path() / "broker";
  MosquittoBroker broker(broker_dir, port, test::persistent_broker_config(broker_dir));
  std::string error;
  REQUIRE_MESSAGE(broker.start(error), error);
  TestSubscriber subscriber(port, "edgefuse-test-subscriber-" + name);
  REQUIRE_MESSAGE(subscriber.start(error), error);

  LogLines log;
  auto created =
      MqttPublisher::create(test::test_publisher_options(port, dir.path() / "spool", log, "edgefuse-test-" + name));
  REQUIRE_MESSAGE(created.is_ok(), created.status().to_string());
  MqttPublisher& publisher = **created;
  REQUIRE(test::wait_until([&] { return publisher.counters().connected; }, 10s));

  std::atomic<bool> producing{true};
  std::atomic<int64_t> produced{0};
  std::thread producer([&] {
    while (producing) {
      const int64_t id = produced + 1;
      if (!publisher.publish("cam-" + std::to_string(id % 3), test::event_payload(id)).is_ok()) break;
      produced = id;
      std::this_thread::sleep_for(4ms);
    }
  });
  for (int restart = 0; restart < restarts; ++restart) {
    CHECK(test::wait_until([&] { return publisher.counters().connected; }, 20s));
    CHECK(subscriber.wait_connected(20s));
    std::this_thread::sleep_for(300ms);
    if (hard_kill) {
      broker.kill_hard();
    } else {
      broker.stop();
    }
    std::this_thread::sleep_for(200ms);
    REQUIRE_MESSAGE(broker.start(error), error);
  }
  CHECK(test::wait_until([&] { return publisher.counters().connected; }, 20s));
  std::this_thread::sleep_for(300ms);
  producing = false;
  producer.join();

  outcome.produced = produced;
  std::set<int64_t> expected;
  for (int64_t id = 1; id <= outcome.produced; ++id) expected.insert(id);
  subscriber.wait_for(expected, 30s);
  CHECK(test::wait_until([&] { return publisher.counters().spool_depth == 0; }, 20s));
  outcome.missing = static_cast<int64_t>(subscriber.missing(expected).size());
  outcome.duplicates = subscriber.duplicates();
  outcome.counters = publisher.counters();
  CHECK(publisher.close(5s).is_ok());
  MESSAGE(outcome.produced << " events, " << restarts << (hard_kill ? " broker SIGKILLs: " : " broker restarts: ")
                           << outcome.missing << " missing, " << outcome.duplicates << " duplicates received, "
                           << outcome.counters.republished << " republished, " << outcome.counters.reconnects
                           << " reconnects");
  return outcome;
}

TEST_CASE("mqtt: the broker restarted three times while events flow: every event arrives") {
  MOSQUITTO_OR_SKIP();
  const int restarts = 3;
  const RestartOutcome outcome = run_with_broker_restarts(/*hard_kill=*/false, restarts, "restart");
  CHECK(outcome.missing == 0);
  CHECK(outcome.counters.reconnects >= restarts);
  CHECK(outcome.counters.spool_depth == 0);
  CHECK(outcome.counters.acknowledged >= outcome.produced);
  CHECK_FALSE(outcome.counters.last_error.empty());  // the last loss is remembered
}

// A SIGKILLed mosquitto loses the QoS 1 messages it acknowledged to the publisher but had neither
// saved (autosave) nor written to the subscriber: not the publisher's to prevent. Seen: 0 in most
// runs, 1 of ~1600 under CPU load. A publisher losing its in-flight window (20) at each reconnect
// would miss about 100 (6%), above the 1% allowed here.
TEST_CASE("mqtt: the broker SIGKILLed five times while events flow: the publisher keeps up and the spool drains") {
  MOSQUITTO_OR_SKIP();
  const int kills = 5;
  const RestartOutcome outcome = run_with_broker_restarts(/*hard_kill=*/true, kills, "kill");
  CHECK(outcome.missing <= outcome.produced / 100);
  CHECK(outcome.counters.reconnects >= kills);
  CHECK(outcome.counters.spool_depth == 0);
  CHECK(outcome.counters.acknowledged >= outcome.produced);
}

TEST_CASE("mqtt: refused and failed connections are logged without the credentials") {
  MOSQUITTO_OR_SKIP();
  test::TempDir dir;
  const int port = test::free_loopback_port();
  // No anonymous access and no password file: every connection is refused as not authorised.
  MosquittoBroker broker(dir.path() / "broker", port, "allow_anonymous false\n");
  std::string error;
  REQUIRE_MESSAGE(broker.start(error), error);
  const std::string password = "hunter2-very-secret";
  const std::string username = "edgefuse-user-name";

  LogLines log;
  MqttOptions options = test::test_publisher_options(port, dir.path() / "spool", log, "edgefuse-test-auth");
  options.username = username;
  options.password = password;
  auto publisher = MqttPublisher::create(options);
  REQUIRE(publisher.is_ok());
  REQUIRE((*publisher)->publish("cam-1", test::event_payload(1)).is_ok());
  CHECK(test::wait_until([&] { return !(*publisher)->counters().last_error.empty(); }, 10s));
  const MqttCounters refused = (*publisher)->counters();
  CHECK_FALSE(refused.connected);
  CHECK(refused.last_error.find("refused") != std::string::npos);
  CHECK(refused.spool_depth == 1);
  // The event stays spooled for the next start.
  const Status closed = (*publisher)->close(100ms);
  CHECK_FALSE(closed.is_ok());
  CHECK(closed.message().find("1 events not acknowledged") != std::string::npos);

  // Nothing listening at all; the spool folder is free once the first publisher is gone.
  (*publisher).reset();
  broker.kill_hard();
  LogLines second_log;
  MqttOptions unreachable = test::test_publisher_options(port, dir.path() / "spool", second_log, "edgefuse-test-auth");
  unreachable.username = username;
  unreachable.password = password;
  auto second = MqttPublisher::create(unreachable);
  REQUIRE(second.is_ok());
  CHECK((*second)->counters().replayed == 1);
  CHECK(test::wait_until([&] { return second_log.any_contains("cannot connect"); }, 10s));
  const std::string last_error = (*second)->counters().last_error;
  static_cast<void>((*second)->close(0ms));

  std::vector<std::string> lines = log.lines();
  const auto more = second_log.lines();
  lines.insert(lines.end(), more.begin(), more.end());
  lines.push_back(refused.last_error);
  lines.push_back(last_error);
  lines.push_back(closed.message());
  for (const std::string& line : lines) {
    CAPTURE(line);
    CHECK(line.find(password) == std::string::npos);
    CHECK(line.find(username) == std::string::npos);
  }
  MESSAGE("refused: " << refused.last_error << " | unreachable: " << last_error);
}

}  // namespace
}  // namespace edgefuse
