// The receiving side of the MQTT tests: a second libmosquitto client with a persistent session
// (fixed id, clean_session=false) and a QoS 1 subscription to `edgefuse/#`, run by libmosquitto's
// own thread, which reconnects after broker loss. Payloads start with "id=<number>;" (the
// publisher tests) or are daemon events, JSON objects with "id":"<run id>-<sequence>"; it records
// every id received and counts duplicates. Any other payload is a state value: the latest per
// topic is kept.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

struct mosquitto;
struct mosquitto_message;

namespace edgefuse::test {

class TestSubscriber {
 public:
  TestSubscriber(int port, std::string client_id);
  ~TestSubscriber();
  TestSubscriber(const TestSubscriber&) = delete;
  TestSubscriber& operator=(const TestSubscriber&) = delete;

  // Connects and waits until the subscription is acknowledged (10 s); false with a reason otherwise.
  bool start(std::string& error);
  // Disconnects cleanly; the broker keeps the session and queues QoS 1 messages for it.
  void stop();

  // Waits until every id in `expected` has been received; false on timeout.
  bool wait_for(const std::set<int64_t>& expected, std::chrono::seconds timeout);
  bool wait_connected(std::chrono::seconds timeout);

  std::set<int64_t> ids() const;
  int64_t duplicates() const;
  std::set<std::string> topics() const;
  // Ids in `expected` not received (for the failure message).
  std::vector<int64_t> missing(const std::set<int64_t>& expected) const;
  // The same for daemon events (JSON payloads).
  std::vector<std::string> missing_events(const std::set<std::string>& expected) const;
  bool wait_for_events(const std::set<std::string>& expected, std::chrono::seconds timeout);
  int64_t event_duplicates() const;
  // The latest payload of every topic whose messages are neither events nor "id=" payloads: the
  // daemon's retained state values (zone counts, line crossings).
  std::map<std::string, std::string> values() const;
  // Waits until values() has `count` topics; false on timeout.
  bool wait_for_values(size_t count, std::chrono::seconds timeout);

 private:
  static void on_connect(mosquitto* client, void* self, int result);
  static void on_disconnect(mosquitto* client, void* self, int result);
  static void on_subscribe(mosquitto* client, void* self, int message_id, int count, const int* granted);
  static void on_message(mosquitto* client, void* self, const mosquitto_message* message);

  int port_;
  std::string client_id_;
  mosquitto* client_ = nullptr;
  mutable std::mutex mutex_;
  bool connected_ = false;
  bool subscribed_ = false;
  std::map<int64_t, int> counts_;
  std::map<std::string, int> event_counts_;
  std::map<std::string, std::string> values_;
  int64_t event_duplicates_ = 0;
  int64_t duplicates_ = 0;
  std::set<std::string> topics_;
};

}  // namespace edgefuse::test
