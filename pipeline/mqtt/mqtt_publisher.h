// MqttPublisher: sends events to an MQTT broker with at-least-once delivery across broker outages
// and process crashes.
//
// publish() appends the event to the EventSpool (options.spool) and wakes the publisher's thread,
// which sends unacknowledged spool records in sequence order with QoS 1 (at most max_inflight
// unacknowledged at a time) and acknowledges each in the spool when its PUBACK arrives. On broker
// loss it reconnects with backoff (ReconnectBackoff) and sends everything still unacknowledged again;
// at start it replays what a previous run left in the spool. Receivers therefore see duplicates
// after outages and restarts: the payload must carry an event id to detect them.
//
// State values (publish_state: a zone's object count, a line's crossings) go another way: only the
// latest value per topic is kept, in memory, and sent with QoS 1 and the retain flag, again after
// every reconnect, so a subscriber arriving at any time reads the current value at once.
//
// Session: fixed client id, clean_session=false, MQTT 3.1.1. Credentials never appear in a log
// line, an error message or last_error.
//
// Threads: publish(), counters() and close() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pipeline/mqtt/mqtt_options.h"
#include "pipeline/mqtt/reconnect_backoff.h"
#include "pipeline/spool/event_spool.h"
#include "runtime/status.h"

struct mosquitto;

namespace edgefuse {

// A snapshot for metrics.
struct MqttCounters {
  bool connected = false;
  int64_t published = 0;     // PUBLISH packets sent, republished ones included
  int64_t acknowledged = 0;  // PUBACKs that completed a spooled event
  int64_t republished = 0;   // sends of an event already sent before in this process (after a reconnect)
  int64_t replayed = 0;      // unacknowledged events found in the spool at start (a previous run's)
  int64_t spool_depth = 0;   // events not yet acknowledged
  int64_t spool_bytes = 0;
  int64_t spool_dropped = 0;     // events lost to the spool's size bound since start
  int64_t reconnects = 0;        // successful connections after the first
  int64_t states_published = 0;  // retained state values sent (not in `published`)
  std::string last_error;        // the latest connection or protocol error; empty when none yet
};

class MqttPublisher {
 public:
  // Validates the options, opens the spool and starts the thread, which connects in the background:
  // an unreachable broker is not an error here (events wait in the spool).
  static Result<std::unique_ptr<MqttPublisher>> create(MqttOptions options);
  ~MqttPublisher();  // close(0s) when close() was not called
  MqttPublisher(const MqttPublisher&) = delete;
  MqttPublisher& operator=(const MqttPublisher&) = delete;

  // Spools one event for <topic_prefix>/<stream>/events. Fails only for a bad stream name, an event
  // larger than the spool bound, or a spool I/O error; an ok return means the event is on disk.
  Status publish(std::string_view stream, std::string_view payload);

  // Sets <topic_prefix>/<stream>/<subtopic> to `value` as a retained message, sent as soon as
  // connected; a newer value for the same topic replaces one not yet sent. Fails only for names
  // that cannot be topic levels.
  Status publish_state(std::string_view stream, std::string_view subtopic, std::string value);

  MqttCounters counters() const;

  // Waits up to `timeout` for every spooled event to be acknowledged, then disconnects and stops the
  // thread. What is still unacknowledged stays in the spool for the next start (the Status says how many).
  Status close(std::chrono::milliseconds timeout);

 private:
  explicit MqttPublisher(MqttOptions options);
  void log(const std::string& line) const;
  void set_last_error(const std::string& error);

  // Thread side.
  void run();
  Result<mosquitto*> make_client() const;
  void connect();
  void service_connection();
  void publish_pending();
  void publish_states();
  void drop_connection(const std::string& reason);
  void wait_for_wake(std::chrono::steady_clock::time_point until);
  void drain_wake();
  void wake();
  static void on_connect(mosquitto* client, void* self, int result);
  static void on_publish(mosquitto* client, void* self, int message_id);

  MqttOptions options_;
  std::string endpoint_;  // host:port, for log lines
  std::unique_ptr<EventSpool> spool_;
  int wake_fd_ = -1;  // eventfd: publish() and close() interrupt the thread's poll()
  std::thread thread_;
  std::atomic<bool> stop_{false};
  bool closed_ = false;  // guarded by close_mutex_
  std::mutex close_mutex_;

  // Flushing: close() waits on this for the spool to empty.
  mutable std::mutex flush_mutex_;
  std::condition_variable flushed_;

  // Owned by the thread.
  mosquitto* client_ = nullptr;
  bool session_up_ = false;  // CONNACK accepted
  std::string refusal_;      // the broker's reason when CONNACK refused
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::steady_clock::time_point connack_deadline_{};
  std::unordered_map<int, uint64_t> inflight_;  // message id -> spool sequence
  uint64_t send_after_ = 0;                     // the newest sequence sent on this connection
  uint64_t highest_sent_ = 0;                   // the newest sequence sent by this process
  bool ever_connected_ = false;
  ReconnectBackoff backoff_;

  // State values: topic -> (value, sent on this connection). Any thread sets, the thread sends.
  struct StateValue {
    std::string value;
    bool sent = false;
  };
  std::mutex states_mutex_;
  std::map<std::string, StateValue> states_;

  std::atomic<bool> connected_{false};
  std::atomic<int64_t> published_{0}, acknowledged_{0}, republished_{0}, replayed_{0}, reconnects_{0};
  std::atomic<int64_t> states_published_{0};
  mutable std::mutex error_mutex_;
  std::string last_error_;
};

}  // namespace edgefuse
