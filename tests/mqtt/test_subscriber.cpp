// The test subscriber.
#include "tests/mqtt/test_subscriber.h"

#include <string_view>
#include <thread>

#include <mosquitto.h>

namespace edgefuse::test {

TestSubscriber::TestSubscriber(int port, std::string client_id) : port_(port), client_id_(std::move(client_id)) {}

TestSubscriber::~TestSubscriber() {
  stop();
}

bool TestSubscriber::start(std::string& error) {
  mosquitto_lib_init();
  client_ = mosquitto_new(client_id_.c_str(), /*clean_session=*/false, this);
  if (client_ == nullptr) {
    error = "mosquitto_new failed";
    return false;
  }
  mosquitto_connect_callback_set(client_, &TestSubscriber::on_connect);
  mosquitto_disconnect_callback_set(client_, &TestSubscriber::on_disconnect);
  mosquitto_subscribe_callback_set(client_, &TestSubscriber::on_subscribe);
  mosquitto_message_callback_set(client_, &TestSubscriber::on_message);
  mosquitto_reconnect_delay_set(client_, 1, 1, false);
  mosquitto_max_inflight_messages_set(client_, 100);
  int rc = mosquitto_connect(client_, "127.0.0.1", port_, 10);
  if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_loop_start(client_);
  if (rc != MOSQ_ERR_SUCCESS) {
    error = std::string("subscriber cannot connect: ") + mosquitto_strerror(rc);
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (subscribed_) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  error = "subscription not acknowledged within 10 s";
  return false;
}

void TestSubscriber::stop() {
  if (client_ == nullptr) return;
  mosquitto_disconnect(client_);
  mosquitto_loop_stop(client_, false);
  mosquitto_destroy(client_);
  client_ = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  connected_ = false;
  subscribed_ = false;
}

bool TestSubscriber::wait_for(const std::set<int64_t>& expected, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (missing(expected).empty()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::vector<std::string> TestSubscriber::missing_events(const std::set<std::string>& expected) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> absent;
  for (const std::string& id : expected) {
    if (!event_counts_.contains(id)) absent.push_back(id);
  }
  return absent;
}

bool TestSubscriber::wait_for_events(const std::set<std::string>& expected, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!missing_events(expected).empty()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

int64_t TestSubscriber::event_duplicates() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return event_duplicates_;
}

bool TestSubscriber::wait_connected(std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (connected_ && subscribed_) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::set<int64_t> TestSubscriber::ids() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::set<int64_t> ids;
  for (const auto& [id, count] : counts_) ids.insert(id);
  return ids;
}

int64_t TestSubscriber::duplicates() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return duplicates_;
}

std::map<std::string, std::string> TestSubscriber::values() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return values_;
}

bool TestSubscriber::wait_for_values(size_t count, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (values().size() < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::set<std::string> TestSubscriber::topics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return topics_;
}

std::vector<int64_t> TestSubscriber::missing(const std::set<int64_t>& expected) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<int64_t> absent;
  for (int64_t id : expected) {
    if (counts_.count(id) == 0) absent.push_back(id);
  }
  return absent;
}

void TestSubscriber::on_connect(mosquitto* client, void* self_pointer, int result) {
  auto* self = static_cast<TestSubscriber*>(self_pointer);
  if (result != 0) return;
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->connected_ = true;
    self->subscribed_ = false;
  }
  // Again after every reconnect: harmless when the broker kept the session, needed when it did not.
  mosquitto_subscribe(client, nullptr, "edgefuse/#", 1);
}

void TestSubscriber::on_disconnect(mosquitto* /*client*/, void* self_pointer, int /*result*/) {
  auto* self = static_cast<TestSubscriber*>(self_pointer);
  std::lock_guard<std::mutex> lock(self->mutex_);
  self->connected_ = false;
}

void TestSubscriber::on_subscribe(mosquitto* /*client*/, void* self_pointer, int /*message_id*/, int /*count*/,
                                  const int* /*granted*/) {
  auto* self = static_cast<TestSubscriber*>(self_pointer);
  std::lock_guard<std::mutex> lock(self->mutex_);
  self->subscribed_ = true;
}

void TestSubscriber::on_message(mosquitto* /*client*/, void* self_pointer, const mosquitto_message* message) {
  auto* self = static_cast<TestSubscriber*>(self_pointer);
  const std::string_view payload(static_cast<const char*>(message->payload), static_cast<size_t>(message->payloadlen));
  if (payload.starts_with("{")) {
    constexpr std::string_view kKey = "\"id\":\"";
    const size_t key = payload.find(kKey);
    if (key == std::string_view::npos) return;
    const size_t start = key + kKey.size();
    const std::string id(payload.substr(start, payload.find('"', start) - start));
    std::lock_guard<std::mutex> lock(self->mutex_);
    if (self->event_counts_[id]++ > 0) ++self->event_duplicates_;
    self->topics_.insert(message->topic);
    return;
  }
  if (!payload.starts_with("id=")) {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->values_[message->topic] = std::string(payload);
    return;
  }
  const int64_t id = std::stoll(std::string(payload.substr(3, payload.find(';') - 3)));
  std::lock_guard<std::mutex> lock(self->mutex_);
  if (self->counts_[id]++ > 0) ++self->duplicates_;
  self->topics_.insert(message->topic);
}

}  // namespace edgefuse::test
