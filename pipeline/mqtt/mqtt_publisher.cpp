// MqttPublisher: the connection thread around a libmosquitto client driven by our own poll(), so
// that publish() can wake it through an eventfd (libmosquitto's own loop cannot wait on that).
#include "pipeline/mqtt/mqtt_publisher.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <mosquitto.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace edgefuse {
namespace {

using Clock = std::chrono::steady_clock;

// A broker that accepted TCP but sends no CONNACK within this time is treated as down.
constexpr std::chrono::seconds kConnackTimeout{10};
// poll() wakes at least this often so keepalive pings and the CONNACK deadline are serviced.
constexpr int kPollIntervalMs = 500;

void init_mosquitto_once() {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
}

std::string describe(int rc, int saved_errno) {
  if (rc == MOSQ_ERR_ERRNO) return std::strerror(saved_errno);
  return mosquitto_strerror(rc);
}

std::string default_client_id() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "edgefuse";
  return std::string("edgefuse-") + host;
}

// Errors about one event rather than the connection: the event can never be sent.
bool is_event_error(int rc) {
  return rc == MOSQ_ERR_PAYLOAD_SIZE || rc == MOSQ_ERR_MALFORMED_UTF8 || rc == MOSQ_ERR_INVAL ||
         rc == MOSQ_ERR_OVERSIZE_PACKET;
}

}  // namespace

MqttPublisher::MqttPublisher(MqttOptions options) : options_(std::move(options)) {
  endpoint_ = make_message(options_.host, ":", options_.port);
}

Result<std::unique_ptr<MqttPublisher>> MqttPublisher::create(MqttOptions options) {
  EF_RETURN_IF_ERROR(validate_mqtt_options(options));
  if (options.client_id.empty()) options.client_id = default_client_id();
  init_mosquitto_once();

  std::unique_ptr<MqttPublisher> publisher(new MqttPublisher(std::move(options)));
  MqttPublisher* self = publisher.get();
  if (!self->options_.spool.log) {
    self->options_.spool.log = [self](std::string line) { self->log("spool: " + line); };
  }
  EF_ASSIGN_OR_RETURN(self->spool_, EventSpool::open(self->options_.spool));
  self->replayed_ = self->spool_->depth();
  // Build one client now so that bad TLS settings fail here rather than in the thread's log.
  EF_ASSIGN_OR_RETURN(mosquitto * probe, self->make_client());
  mosquitto_destroy(probe);
  self->wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (self->wake_fd_ < 0) return io_error("mqtt: eventfd failed: ", std::strerror(errno));
  self->thread_ = std::thread([self] { self->run(); });
  return publisher;
}

MqttPublisher::~MqttPublisher() {
  static_cast<void>(close(std::chrono::milliseconds(0)));
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void MqttPublisher::log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "edgefuse: mqtt: %s\n", line.c_str());
  }
}

void MqttPublisher::set_last_error(const std::string& error) {
  std::lock_guard<std::mutex> lock(error_mutex_);
  last_error_ = error;
}

Status MqttPublisher::publish(std::string_view stream, std::string_view payload) {
  EF_ASSIGN_OR_RETURN(std::string topic, mqtt_event_topic(options_.topic_prefix, stream));
  auto sequence = spool_->append(topic, payload);
  if (!sequence.is_ok())
    return sequence.status().with_context("mqtt: cannot spool an event of stream '" + std::string(stream) + "'");
  wake();
  return Status::ok();
}

Status MqttPublisher::publish_state(std::string_view stream, std::string_view subtopic, std::string value) {
  EF_ASSIGN_OR_RETURN(std::string topic, mqtt_state_topic(options_.topic_prefix, stream, subtopic));
  {
    const std::lock_guard lock(states_mutex_);
    states_[std::move(topic)] = {std::move(value), false};
  }
  wake();
  return Status::ok();
}

MqttCounters MqttPublisher::counters() const {
  MqttCounters counters;
  counters.spool_depth = spool_->depth();  // first: see on_publish
  counters.connected = connected_.load();
  counters.published = published_.load();
  counters.acknowledged = acknowledged_.load();
  counters.republished = republished_.load();
  counters.replayed = replayed_.load();
  counters.reconnects = reconnects_.load();
  counters.states_published = states_published_.load();
  counters.spool_bytes = spool_->bytes();
  counters.spool_dropped = spool_->dropped();
  std::lock_guard<std::mutex> lock(error_mutex_);
  counters.last_error = last_error_;
  return counters;
}

Status MqttPublisher::close(std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> close_lock(close_mutex_);
  if (closed_) return Status::ok();
  closed_ = true;
  if (thread_.joinable()) {
    {
      std::unique_lock<std::mutex> lock(flush_mutex_);
      flushed_.wait_for(lock, timeout, [this] { return spool_->depth() == 0; });
    }
    stop_ = true;
    wake();
    thread_.join();
  }
  const int64_t left = spool_ ? spool_->depth() : 0;
  if (left > 0) {
    return io_error("mqtt: ", left, " events not acknowledged by ", endpoint_, " within ", timeout.count(),
                    " ms; they stay in the spool for the next start");
  }
  return Status::ok();
}

// ---- The thread -------------------------------------------------------------------------------

void MqttPublisher::wake() {
  const uint64_t one = 1;
  if (::write(wake_fd_, &one, sizeof(one)) < 0) {
    // EAGAIN: the counter is saturated, so the thread is woken anyway.
  }
}

void MqttPublisher::drain_wake() {
  uint64_t count = 0;
  while (::read(wake_fd_, &count, sizeof(count)) > 0) {
  }
}

void MqttPublisher::wait_for_wake(Clock::time_point until) {
  const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
  pollfd fd = {wake_fd_, POLLIN, 0};
  ::poll(&fd, 1, static_cast<int>(std::clamp<int64_t>(wait, 0, kPollIntervalMs)));
  drain_wake();
}

Result<mosquitto*> MqttPublisher::make_client() const {
  mosquitto* client =
      mosquitto_new(options_.client_id.c_str(), /*clean_session=*/false, const_cast<MqttPublisher*>(this));
  if (client == nullptr) return io_error("mqtt: cannot create a client: ", std::strerror(errno));
  auto fail = [client](const char* what, int rc) -> Status {
    const int saved_errno = errno;
    mosquitto_destroy(client);
    return invalid_argument("mqtt: ", what, ": ", describe(rc, saved_errno));
  };
  int rc = mosquitto_int_option(client, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  if (rc == MOSQ_ERR_SUCCESS)
    rc = mosquitto_max_inflight_messages_set(client, static_cast<unsigned>(options_.max_inflight));
  if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_int_option(client, MOSQ_OPT_TCP_NODELAY, 1);
  if (rc != MOSQ_ERR_SUCCESS) return fail("client options rejected", rc);
  if (!options_.username.empty()) {
    rc = mosquitto_username_pw_set(client, options_.username.c_str(),
                                   options_.password.empty() ? nullptr : options_.password.c_str());
    if (rc != MOSQ_ERR_SUCCESS) return fail("username/password rejected", rc);
  }
  if (!options_.ca_file.empty() || !options_.cert_file.empty()) {
    if (options_.ca_file.empty()) mosquitto_int_option(client, MOSQ_OPT_TLS_USE_OS_CERTS, 1);
    rc = mosquitto_tls_set(client, options_.ca_file.empty() ? nullptr : options_.ca_file.c_str(), nullptr,
                           options_.cert_file.empty() ? nullptr : options_.cert_file.c_str(),
                           options_.key_file.empty() ? nullptr : options_.key_file.c_str(), nullptr);
    if (rc != MOSQ_ERR_SUCCESS) return fail("TLS setup (ca_file, cert_file, key_file) failed", rc);
    if (options_.tls_insecure) mosquitto_tls_insecure_set(client, true);
  }
  mosquitto_connect_callback_set(client, &MqttPublisher::on_connect);
  mosquitto_publish_callback_set(client, &MqttPublisher::on_publish);
  return client;
}

void MqttPublisher::run() {
  while (!stop_) {
    if (client_ == nullptr) {
      if (Clock::now() < next_attempt_) {
        wait_for_wake(next_attempt_);
      } else {
        connect();
      }
      continue;
    }
    service_connection();
    if (client_ != nullptr && session_up_) publish_pending();
    if (client_ != nullptr && session_up_) publish_states();
  }
  if (client_ != nullptr) {
    // DISCONNECT is written at once (no libmosquitto thread): the broker keeps the session, not a will.
    if (session_up_) mosquitto_disconnect(client_);
    mosquitto_destroy(client_);
    client_ = nullptr;
  }
  connected_ = false;
}

void MqttPublisher::connect() {
  auto client = make_client();
  if (!client.is_ok()) {
    drop_connection(client.status().message());
    return;
  }
  client_ = *client;
  session_up_ = false;
  refusal_.clear();
  // Blocking TCP (and TLS) connect, as libmosquitto requires without its own thread; CONNACK comes later.
  const int rc = mosquitto_connect(client_, options_.host.c_str(), options_.port, options_.keepalive_s);
  if (rc != MOSQ_ERR_SUCCESS) {
    drop_connection(describe(rc, errno));
    return;
  }
  connack_deadline_ = Clock::now() + kConnackTimeout;
}

void MqttPublisher::service_connection() {
  const int socket = mosquitto_socket(client_);
  if (socket < 0) {
    drop_connection("connection closed");
    return;
  }
  pollfd fds[2] = {{wake_fd_, POLLIN, 0},
                   {socket, static_cast<short>(POLLIN | (mosquitto_want_write(client_) ? POLLOUT : 0)), 0}};
  if (::poll(fds, 2, kPollIntervalMs) < 0 && errno != EINTR) {
    drop_connection(make_message("poll failed: ", std::strerror(errno)));
    return;
  }
  drain_wake();
  int rc = MOSQ_ERR_SUCCESS;
  if (fds[1].revents & (POLLIN | POLLERR | POLLHUP)) rc = mosquitto_loop_read(client_, 1);
  if (rc == MOSQ_ERR_SUCCESS && (fds[1].revents & POLLOUT)) rc = mosquitto_loop_write(client_, 1);
  if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_loop_misc(client_);
  if (!refusal_.empty()) {
    drop_connection(refusal_);
  } else if (rc != MOSQ_ERR_SUCCESS) {
    drop_connection(describe(rc, errno));
  } else if (!session_up_ && Clock::now() > connack_deadline_) {
    drop_connection("no CONNACK from the broker within 10 s");
  }
}

void MqttPublisher::publish_pending() {
  const size_t max_inflight = static_cast<size_t>(options_.max_inflight);
  while (client_ != nullptr && inflight_.size() < max_inflight) {
    const std::vector<SpoolRecord> batch = spool_->unacknowledged(send_after_, max_inflight - inflight_.size());
    if (batch.empty()) return;
    for (const SpoolRecord& record : batch) {
      int message_id = 0;
      const int rc =
          mosquitto_publish(client_, &message_id, record.topic.c_str(), static_cast<int>(record.payload.size()),
                            record.payload.data(), /*qos=*/1, /*retain=*/false);
      const int saved_errno = errno;
      send_after_ = record.sequence;
      if (is_event_error(rc)) {
        log(make_message("discarding event ", record.sequence, " on '", record.topic, "': the broker cannot take it (",
                         describe(rc, saved_errno), ")"));
        static_cast<void>(spool_->acknowledge(record.sequence));
        continue;
      }
      if (rc != MOSQ_ERR_SUCCESS) {
        drop_connection(make_message("publish failed: ", describe(rc, saved_errno)));
        return;
      }
      inflight_[message_id] = record.sequence;
      ++published_;
      if (record.sequence <= highest_sent_) {
        ++republished_;
      } else {
        highest_sent_ = record.sequence;
      }
    }
  }
}

void MqttPublisher::publish_states() {
  const std::lock_guard lock(states_mutex_);
  for (auto& [topic, state] : states_) {
    if (state.sent) continue;
    // QoS 1 without tracking the PUBACK: a value lost with the connection is sent again on the
    // next one (every value is unsent after a reconnect), and a newer one supersedes it anyway.
    const int rc = mosquitto_publish(client_, nullptr, topic.c_str(), static_cast<int>(state.value.size()),
                                     state.value.data(), /*qos=*/1, /*retain=*/true);
    if (rc != MOSQ_ERR_SUCCESS) return;  // the connection's trouble shows in service_connection()
    state.sent = true;
    ++states_published_;
  }
}

void MqttPublisher::drop_connection(const std::string& reason) {
  const bool was_up = session_up_;
  session_up_ = false;
  connected_ = false;
  inflight_.clear();
  send_after_ = 0;
  if (client_ != nullptr) {
    mosquitto_destroy(client_);
    client_ = nullptr;
  }
  const auto delay = backoff_.next_delay();
  next_attempt_ = Clock::now() + delay;
  const std::string what = was_up ? "connection to " + endpoint_ + " lost" : "cannot connect to " + endpoint_;
  set_last_error(what + ": " + reason);
  log(make_message(what, ": ", reason, "; retrying in ", delay.count() / 100 / 10.0, " s (", spool_->depth(),
                   " events waiting)"));
}

void MqttPublisher::on_connect(mosquitto* /*client*/, void* self_pointer, int result) {
  auto* self = static_cast<MqttPublisher*>(self_pointer);
  if (result != 0) {
    self->refusal_ = make_message("the broker refused the connection: ", mosquitto_connack_string(result));
    return;
  }
  self->session_up_ = true;
  self->connected_ = true;
  self->backoff_.reset();
  self->send_after_ = 0;  // everything unacknowledged goes out again on a new connection
  {
    const std::lock_guard lock(self->states_mutex_);
    for (auto& [topic, state] : self->states_) state.sent = false;  // and every state value
  }
  if (self->ever_connected_) ++self->reconnects_;
  self->ever_connected_ = true;
  self->log(make_message("connected to ", self->endpoint_, " as '", self->options_.client_id, "' (",
                         self->spool_->depth(), " events waiting)"));
}

void MqttPublisher::on_publish(mosquitto* /*client*/, void* self_pointer, int message_id) {
  auto* self = static_cast<MqttPublisher*>(self_pointer);
  auto found = self->inflight_.find(message_id);
  if (found == self->inflight_.end()) return;
  const uint64_t sequence = found->second;
  self->inflight_.erase(found);
  // Counted before the spool lets the event go, so that whoever sees the spool empty (counters()
  // reads its depth first) also sees every acknowledgement.
  ++self->acknowledged_;
  if (Status acked = self->spool_->acknowledge(sequence); !acked.is_ok()) self->log(acked.to_string());
  { std::lock_guard<std::mutex> lock(self->flush_mutex_); }
  self->flushed_.notify_all();
}

}  // namespace edgefuse
