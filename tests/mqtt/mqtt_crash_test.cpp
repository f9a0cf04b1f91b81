// MqttPublisher across a process crash: a child process publishes while the broker is down, then
// while it is up, and is SIGKILLed without warning; a new publisher over the same spool folder
// replays, and every event whose publish() returned ok in the child reaches the subscriber.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/mqtt/mqtt_test_support.h"
#include "tests/mqtt/test_subscriber.h"
#include "tests/spool/spool_test_support.h"

namespace edgefuse {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kEventsWhileDown = 500;
constexpr int64_t kEventsWhileUp = 500;

// The child: report each id through `report_fd` once publish() returned ok.
[[noreturn]] void run_child_publisher(int port, const std::filesystem::path& spool_dir, int report_fd) {
  test::LogLines log;
  auto publisher = MqttPublisher::create(test::test_publisher_options(port, spool_dir, log, "edgefuse-test-c"));
  if (!publisher.is_ok()) _exit(3);
  auto report = [&](int64_t id) {
    if (::write(report_fd, &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id))) _exit(4);
  };
  for (int64_t id = 1; id <= kEventsWhileDown; ++id) {
    if (!(*publisher)->publish("cam-1", test::event_payload(id)).is_ok()) _exit(5);
    report(id);
  }
  // The parent starts the broker now; go on once some events are through, then publish in a burst.
  while ((*publisher)->counters().acknowledged < 100) std::this_thread::sleep_for(1ms);
  for (int64_t id = kEventsWhileDown + 1; id <= kEventsWhileDown + kEventsWhileUp; ++id) {
    if (!(*publisher)->publish("cam-1", test::event_payload(id)).is_ok()) _exit(5);
    report(id);
  }
  while (true) std::this_thread::sleep_for(1s);  // killed here, or earlier
}

TEST_CASE("mqtt: a publisher SIGKILLed mid-stream loses nothing: the next one replays its spool") {
  MOSQUITTO_OR_SKIP();
  test::TempDir dir;
  const int port = test::free_loopback_port();
  const auto broker_dir = dir.path() / "broker";
  test::MosquittoBroker broker(broker_dir, port, test::persistent_broker_config(broker_dir));
  std::string error;
  REQUIRE_MESSAGE(broker.start(error), error);
  {
    // Create the subscriber's persistent session, then leave: the broker queues for it from now on.
    test::TestSubscriber session(port, "edgefuse-test-subscriber-c");
    REQUIRE_MESSAGE(session.start(error), error);
  }
  broker.stop();  // SIGTERM: the session is saved

  // No threads of ours run during fork(): the child starts from a clean process.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(fds[0]);
    run_child_publisher(port, dir.path() / "spool", fds[1]);
  }
  ::close(fds[1]);
  std::set<int64_t> reported;
  int64_t id = 0;
  while (static_cast<int64_t>(reported.size()) < kEventsWhileDown &&
         ::read(fds[0], &id, sizeof(id)) == static_cast<ssize_t>(sizeof(id))) {
    reported.insert(id);
  }
  REQUIRE_MESSAGE(broker.start(error), error);
  while (static_cast<int64_t>(reported.size()) < kEventsWhileDown + kEventsWhileUp &&
         ::read(fds[0], &id, sizeof(id)) == static_cast<ssize_t>(sizeof(id))) {
    reported.insert(id);
  }
  ::kill(child, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  ::close(fds[0]);
  REQUIRE(reported.size() == kEventsWhileDown + kEventsWhileUp);
  CHECK(WIFSIGNALED(status));

  test::TestSubscriber subscriber(port, "edgefuse-test-subscriber-c");
  REQUIRE_MESSAGE(subscriber.start(error), error);
  test::LogLines log;
  auto publisher =
      MqttPublisher::create(test::test_publisher_options(port, dir.path() / "spool", log, "edgefuse-test-c"));
  REQUIRE_MESSAGE(publisher.is_ok(), publisher.status().to_string());
  const int64_t replayed = (*publisher)->counters().replayed;
  const bool all_received = subscriber.wait_for(reported, 30s);
  const auto missing = subscriber.missing(reported);
  CHECK_MESSAGE(all_received,
                missing.size() << " reported events never arrived, first " << (missing.empty() ? 0 : missing.front()));
  CHECK((*publisher)->close(10s).is_ok());
  CHECK((*publisher)->counters().spool_depth == 0);
  // The child had some events acknowledged (it waited for 100) and was killed right after its burst.
  CHECK(replayed > 0);
  CHECK(replayed < kEventsWhileDown + kEventsWhileUp);
  MESSAGE("child killed after " << reported.size() << " events; the new publisher replayed " << replayed
                                << "; subscriber got " << subscriber.duplicates() << " duplicates");
}

}  // namespace
}  // namespace edgefuse
