// Shared pieces of the MQTT tests: the skip when mosquitto is absent, the broker configuration with
// persistence, publisher options for a test, and a thread-safe collector of log lines.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/mqtt/mqtt_publisher.h"
#include "tests/mqtt/mosquitto_broker.h"

namespace edgefuse::test {

class LogLines {
 public:
  std::function<void(std::string)> callback() {
    return [this](std::string line) {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_.push_back(std::move(line));
    };
  }
  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }
  bool any_contains(const std::string& text) const {
    for (const std::string& line : lines()) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

// Persistence saved after every change, so that a SIGKILLed broker loses as little as it can.
inline std::string persistent_broker_config(const std::filesystem::path& dir) {
  return "allow_anonymous true\npersistence true\npersistence_location " + dir.string() +
         "/\nautosave_interval 1\nautosave_on_changes true\nmax_queued_messages 100000\n";
}

inline MqttOptions test_publisher_options(int port, const std::filesystem::path& spool_dir, LogLines& log,
                                          const std::string& client_id) {
  MqttOptions options;
  options.port = port;
  options.client_id = client_id;
  options.spool.dir = spool_dir;
  options.log = log.callback();
  return options;
}

// "id=<n>;" then filler, as the subscriber parses it.
inline std::string event_payload(int64_t id) {
  return "id=" + std::to_string(id) + ";{\"event\":\"detection\"}";
}

template <typename Predicate>
bool wait_until(Predicate predicate, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace edgefuse::test

#define MOSQUITTO_OR_SKIP()                                                                          \
  if (::edgefuse::test::mosquitto_binary().empty()) {                                                \
    MESSAGE("SKIPPED: mosquitto broker not installed (apt install mosquitto; looked in /usr/sbin)"); \
    return;                                                                                          \
  }
