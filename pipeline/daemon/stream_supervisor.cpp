#include "pipeline/daemon/stream_supervisor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "pipeline/video/stream_credentials.h"

namespace edgefuse {
namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch()).count();
}

// Files end; cameras and test patterns only end when something went wrong.
bool is_live(SourceKind kind) {
  return kind == SourceKind::kRtsp || kind == SourceKind::kV4l2;
}

std::string format_seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", seconds);
  return text;
}

}  // namespace

const char* stream_state_name(StreamState state) {
  switch (state) {
    case StreamState::kConnecting:
      return "connecting";
    case StreamState::kStreaming:
      return "streaming";
    case StreamState::kStalled:
      return "stalled";
    case StreamState::kBackoff:
      return "backoff";
    case StreamState::kEnded:
      return "ended";
    case StreamState::kFailed:
      return "failed";
  }
  return "unknown";
}

StreamSupervisor::StreamSupervisor(VideoSourceOptions source_options, SupervisorOptions options, FrameCallback on_frame,
                                   StateCallback on_state)
    : source_options_(std::move(source_options)),
      options_(std::move(options)),
      on_frame_(std::move(on_frame)),
      on_state_(std::move(on_state)) {
  if (options_.backoff_s.empty()) options_.backoff_s = {1};
}

StreamSupervisor::~StreamSupervisor() {
  stop();
}

Status StreamSupervisor::start() {
  EF_RETURN_IF_ERROR(start_source());
  thread_ = std::thread([this] { supervise(); });
  return Status::ok();
}

void StreamSupervisor::stop() {
  {
    const std::lock_guard lock(mutex_);  // so a waiting supervisor cannot miss the wake-up
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // start() built one but the thread never ran; VideoSource's destructor stops it, outside the lock.
  std::unique_ptr<VideoSource> last;
  {
    const std::lock_guard lock(mutex_);
    last = std::move(source_);
  }
}

std::string StreamSupervisor::last_error() const {
  const std::lock_guard lock(mutex_);
  return error_;
}

std::string StreamSupervisor::decoder_name() const {
  const std::lock_guard lock(mutex_);
  if (source_) {
    std::string current = source_->decoder_name();
    if (!current.empty()) return current;
  }
  return decoder_;
}

double StreamSupervisor::seconds_since_frame() const {
  return static_cast<double>(steady_now_ns() - last_frame_ns_.load()) * 1e-9;
}

Status StreamSupervisor::start_source() {
  auto on_frame = [this](DecodedFrame frame) {
    last_frame_ns_.store(steady_now_ns());
    StreamState expected = StreamState::kConnecting;
    if (state_.compare_exchange_strong(expected, StreamState::kStreaming) && on_state_) {
      on_state_({StreamState::kConnecting, StreamState::kStreaming, "first frame decoded", 0});
    }
    on_frame_(std::move(frame));
  };
  // The watchdog counts from the start of each attempt.
  last_frame_ns_.store(steady_now_ns());
  Result<std::unique_ptr<VideoSource>> source = VideoSource::create(source_options_, std::move(on_frame));
  if (!source.is_ok()) return source.status();
  EF_RETURN_IF_ERROR((*source)->start());
  const std::lock_guard lock(mutex_);
  source_ = std::move(source).value();
  return Status::ok();
}

void StreamSupervisor::supervise() {
  int attempt = 0;
  while (!stopping_.load()) {
    const StateChange change = watch_source();
    {
      const std::lock_guard lock(mutex_);
      const std::string decoder = source_->decoder_name();
      if (!decoder.empty()) decoder_ = decoder;
      if (change.to == StreamState::kFailed || change.to == StreamState::kBackoff) error_ = change.reason;
    }
    source_->stop();  // blocks only this stream when the peer stopped answering
    {
      const std::lock_guard lock(mutex_);
      source_.reset();
    }
    if (stopping_.load()) return;
    if (change.to == StreamState::kStalled) {
      stalls_.fetch_add(1);
      set_state(StreamState::kStalled, change.reason);
    }
    if (change.to == StreamState::kEnded || change.to == StreamState::kFailed) {
      set_state(change.to, change.reason);
      return;
    }
    // A source that delivered frames earns a fresh schedule: the next outage starts at 1 s again.
    if (change.from == StreamState::kStreaming) attempt = 0;
    const double delay = next_delay_s(attempt++);
    set_state(StreamState::kBackoff, change.reason, delay);
    if (!sleep_unless_stopped(delay)) return;
    set_state(StreamState::kConnecting, "attempt " + std::to_string(attempt));
    reconnects_.fetch_add(1);
    if (Status started = start_source(); !started.is_ok()) {
      // Could not even build or start it: count as a failed attempt and go round again.
      const std::lock_guard lock(mutex_);
      error_ = scrub_secrets(started.message());
    }
    while (source_ == nullptr && !stopping_.load()) {
      const double retry = next_delay_s(attempt++);
      set_state(StreamState::kBackoff, last_error(), retry);
      if (!sleep_unless_stopped(retry)) return;
      set_state(StreamState::kConnecting, "attempt " + std::to_string(attempt));
      reconnects_.fetch_add(1);
      if (Status started = start_source(); !started.is_ok()) {
        const std::lock_guard lock(mutex_);
        error_ = scrub_secrets(started.message());
      }
    }
  }
}

StateChange StreamSupervisor::watch_source() {
  const bool live = is_live(source_options_.address.kind);
  std::unique_lock lock(mutex_);
  for (;;) {
    const StreamState current = state_.load();
    if (stopping_.load()) return {current, current, "stopping"};
    if (source_->done()) {
      const std::string error = scrub_secrets(source_->error());
      if (!error.empty()) {
        return {current, options_.reconnect ? StreamState::kBackoff : StreamState::kFailed, error};
      }
      if (live && options_.reconnect) return {current, StreamState::kBackoff, "the live stream ended"};
      return {current, StreamState::kEnded, "end of stream"};
    }
    if (options_.watchdog_s > 0 && seconds_since_frame() >= options_.watchdog_s) {
      return {current, options_.reconnect ? StreamState::kStalled : StreamState::kFailed,
              "no frame decoded for " + format_seconds(seconds_since_frame()) + " s"};
    }
    wake_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

void StreamSupervisor::set_state(StreamState to, std::string reason, double delay_s) {
  const StreamState from = state_.exchange(to);
  if (from == to && to != StreamState::kBackoff) return;
  if (on_state_) on_state_({from, to, scrub_secrets(reason), delay_s});
}

bool StreamSupervisor::sleep_unless_stopped(double seconds) {
  std::unique_lock lock(mutex_);
  return !wake_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping_.load(); });
}

double StreamSupervisor::next_delay_s(int attempt) {
  const size_t index = std::min(static_cast<size_t>(attempt), options_.backoff_s.size() - 1);
  std::uniform_real_distribution<double> factor(1 - options_.jitter, 1 + options_.jitter);
  return options_.backoff_s[index] * factor(random_);
}

}  // namespace edgefuse
