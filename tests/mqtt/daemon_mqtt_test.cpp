// The daemon's events reach an MQTT subscriber through everything an installation goes through:
// the broker restarted twice while events flow, and the daemon itself SIGKILLed and started again
// over its spool. The events file is the record of what was emitted; the subscriber (persistent
// session) must hold every id in it, duplicates allowed and counted, and the spool must be empty
// once the last daemon has stopped. (Broker SIGKILLs are exercised in mqtt_crash_test.cpp.) And the
// retained zone and line values: what a subscriber arriving after the run reads matches the events.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/mqtt/mosquitto_broker.h"
#include "tests/mqtt/test_subscriber.h"
#include "tests/support/assets.h"

namespace edgefuse::test {
namespace {

// `edgefuse run --config FILE` as its own process, stderr appended to `log`.
class DaemonProcess {
 public:
  DaemonProcess(const std::filesystem::path& config, const std::filesystem::path& log) {
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      std::FILE* out = std::freopen(log.c_str(), "a", stderr);
      (void)out;
      execl(EDGEFUSE_CLI, EDGEFUSE_CLI, "run", "--config", config.c_str(), nullptr);
      _exit(127);
    }
  }
  ~DaemonProcess() {
    if (pid_ > 0) kill_hard();
  }
  void kill_hard() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  int wait() {  // until it exits by itself; the exit status
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  int terminate() {  // SIGTERM: drain, flush MQTT, exit; the exit status
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
};

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string text, line;
  while (std::getline(in, line)) text += line + "\n";
  return text;
}

// Every "id" of the events file. A line cut short by the SIGKILL (none is expected: each line is
// one write) would have no closing quote and is not counted.
std::set<std::string> emitted_ids(const std::filesystem::path& events) {
  std::set<std::string> ids;
  std::ifstream in(events);
  constexpr std::string_view kKey = "\"id\":\"";
  for (std::string line; std::getline(in, line);) {
    const size_t key = line.find(kKey);
    if (key == std::string::npos) continue;
    const size_t start = key + kKey.size(), end = line.find('"', start);
    if (end != std::string::npos && line.back() == '}') ids.insert(line.substr(start, end - start));
  }
  return ids;
}

void pause_s(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// Waits until the events file holds at least `count` ids: progress is counted in events, not in
// seconds, so a slow machine (or a sanitizer build) runs the same scenario, only longer.
bool wait_for_emitted(const std::filesystem::path& events, size_t count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (emitted_ids(events).size() < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    pause_s(0.1);
  }
  return true;
}

TEST_CASE("every event the daemon emitted reaches the subscriber across broker restarts and a daemon crash") {
  if (mosquitto_binary().empty()) {
    MESSAGE("SKIPPED: mosquitto is not installed (apt install mosquitto)");
    return;
  }
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("edgefuse_daemon_mqtt_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const int port = free_loopback_port();
  // Persistence on, saved on every change: what the broker acknowledged survives its restarts.
  MosquittoBroker broker(dir / "broker", port,
                         "allow_anonymous true\npersistence true\npersistence_location " + (dir / "broker").string() +
                             "/\nautosave_interval 1\nautosave_on_changes true\nmax_queued_messages 100000\n");
  std::string error;
  REQUIRE_MESSAGE(broker.start(error), error);
  TestSubscriber subscriber(port, "edgefuse-test-checker");
  REQUIRE_MESSAGE(subscriber.start(error), error);

  const std::filesystem::path config = dir / "config.yaml", events = dir / "events.jsonl", log = dir / "daemon.log";
  std::ofstream(config) << "models:\n  - name: people\n    path: " << model.string() << "\n    threads: 1\n"
                        << "streams:\n  - name: pattern\n    uri: test://ball\n    model: people\n"
                        << "    width: 320\n    height: 240\n    inference-interval: 5\n"
                        << "events:\n  path: " << events.string() << "\n  empty-frames: true\n"
                        << "mqtt:\n  port: " << port
                        << "\n  client-id: edgefuse-test-daemon\n  spool-dir: " << (dir / "spool").string()
                        << "\nstats-interval-s: 0\n";

  {
    DaemonProcess first(config, log);
    REQUIRE(wait_for_emitted(events, 6));
    for (int restart = 0; restart < 2; ++restart) {
      broker.stop();  // events keep coming: they wait in the spool
      REQUIRE(wait_for_emitted(events, emitted_ids(events).size() + 4));
      REQUIRE_MESSAGE(broker.start(error), error);
      REQUIRE(wait_for_emitted(events, emitted_ids(events).size() + 4));
    }
    first.kill_hard();  // what was spooled but not acknowledged is replayed by the next run
  }
  const size_t emitted_by_first = emitted_ids(events).size();
  DaemonProcess second(config, log);
  REQUIRE(wait_for_emitted(events, emitted_by_first + 6));
  CHECK(second.terminate() == 0);

  const std::set<std::string> emitted = emitted_ids(events);
  MESSAGE("events emitted: " << emitted.size() << " (" << emitted_by_first << " before the SIGKILL)");
  CHECK(emitted_by_first >= 20);
  CHECK(emitted.size() > emitted_by_first);
  const bool all = subscriber.wait_for_events(emitted, std::chrono::seconds(60));
  const std::vector<std::string> missing = subscriber.missing_events(emitted);
  MESSAGE("received all: " << all << ", missing " << missing.size() << ", duplicates "
                           << subscriber.event_duplicates());
  CHECK(missing.empty());
  const std::string daemon_log = read_file(log);
  CHECK(daemon_log.find("replayed from the spool") != std::string::npos);
  CHECK(daemon_log.find("left in the spool 0") != std::string::npos);  // the last run flushed everything
  subscriber.stop();
  broker.stop();
  std::filesystem::remove_all(dir);
}

TEST_CASE("zone counts and line crossings are retained values a late subscriber reads at once") {
  if (mosquitto_binary().empty()) {
    MESSAGE("SKIPPED: mosquitto is not installed (apt install mosquitto)");
    return;
  }
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("edgefuse_zone_states_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const int port = free_loopback_port();
  MosquittoBroker broker(dir / "broker", port, "allow_anonymous true\n");
  std::string error;
  REQUIRE_MESSAGE(broker.start(error), error);

  // The clip at one frame in 10, to its end: the halves' counts change, people cross the middle.
  const std::filesystem::path config = dir / "config.yaml", events = dir / "events.jsonl", log = dir / "daemon.log";
  std::ofstream(config) << "models:\n  - name: people\n    path: " << model.string() << "\n    threads: 1\n"
                        << "streams:\n  - name: street\n    uri: " << clip.string()
                        << "\n    model: people\n    realtime: false\n    queue-size: 64\n    inference-interval: 10\n"
                        << "    classes: [person]\n    track-max-age: 5\n    zones:\n"
                        << "      - name: left\n        points: [[0, 0], [0.5, 0], [0.5, 1], [0, 1]]\n"
                        << "      - name: right\n        points: [[0.5, 0], [1, 0], [1, 1], [0.5, 1]]\n"
                        << "    lines:\n      - name: middle\n        points: [[0.5, 0], [0.5, 1]]\n"
                        << "events:\n  path: " << events.string() << "\n  empty-frames: true\n"
                        << "mqtt:\n  port: " << port
                        << "\n  client-id: edgefuse-test-zones\n  spool-dir: " << (dir / "spool").string()
                        << "\nstats-interval-s: 0\n";
  DaemonProcess daemon(config, log);
  REQUIRE(daemon.wait() == 0);

  // What the events say: the last frame's counts, and all crossings by direction.
  nlohmann::json last;
  int forward = 0, backward = 0;
  std::ifstream in(events);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json event = nlohmann::json::parse(line);
    if (event.at("type") != "detections") continue;
    last = event;
    for (const nlohmann::json& crossing : event.value("line_crossings", nlohmann::json::array())) {
      (crossing.at("direction") == "forward" ? forward : backward)++;
    }
  }
  REQUIRE(last.is_object());
  // A subscriber arriving after the daemon has gone still reads every value.
  TestSubscriber late(port, "edgefuse-test-late");
  REQUIRE_MESSAGE(late.start(error), error);
  REQUIRE(late.wait_for_values(6, std::chrono::seconds(10)));
  const std::map<std::string, std::string> values = late.values();
  // People walk through both halves, so each has its per-class value too (0 when none stands there).
  const std::map<std::string, std::string> expected = {
      {"edgefuse/street/zones/left", std::to_string(last.at("zone_counts").at("left").get<int>())},
      {"edgefuse/street/zones/right", std::to_string(last.at("zone_counts").at("right").get<int>())},
      {"edgefuse/street/zones/left/person", std::to_string(last.at("zone_class_counts").at("left").value("person", 0))},
      {"edgefuse/street/zones/right/person",
       std::to_string(last.at("zone_class_counts").at("right").value("person", 0))},
      {"edgefuse/street/lines/middle/forward", std::to_string(forward)},
      {"edgefuse/street/lines/middle/backward", std::to_string(backward)}};
  CHECK(values == expected);
  MESSAGE("retained: left ", values.at("edgefuse/street/zones/left"), ", right ",
          values.at("edgefuse/street/zones/right"), ", crossings ", forward, " forward, ", backward, " backward");
  CHECK(forward + backward > 0);
  late.stop();
  broker.stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace edgefuse::test
