#include "pipeline/daemon/frame_scheduler.h"

#include "runtime/status.h"

namespace edgefuse {

FrameScheduler::FrameScheduler(std::vector<StreamSlot> streams, int max_batch, std::chrono::milliseconds batch_timeout)
    : streams_(std::move(streams)),
      queues_(streams_.size()),
      in_flight_(streams_.size(), 0),
      max_batch_(max_batch),
      batch_timeout_(batch_timeout) {
  EF_ASSERT(max_batch_ >= 1);
  for (const StreamSlot& slot : streams_) EF_ASSERT(slot.queue_size >= 1 && slot.stats != nullptr);
}

int FrameScheduler::add_stream(StreamSlot slot) {
  EF_ASSERT(slot.queue_size >= 1 && slot.stats != nullptr);
  const std::lock_guard lock(mutex_);
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i].stats == nullptr) {
      streams_[i] = slot;
      return static_cast<int>(i);
    }
  }
  streams_.push_back(slot);
  queues_.emplace_back();
  in_flight_.push_back(0);
  return static_cast<int>(streams_.size() - 1);
}

void FrameScheduler::remove_stream(int stream) {
  std::unique_lock lock(mutex_);
  const auto index = static_cast<size_t>(stream);
  EF_ASSERT(index < streams_.size() && streams_[index].stats != nullptr);
  ready_.notify_all();
  drained_.wait(lock, [&] { return queues_[index].empty() && in_flight_[index] == 0; });
  streams_[index] = StreamSlot{};
  streams_[index].stats = nullptr;
}

void FrameScheduler::finished(const std::vector<PendingFrame>& batch) {
  {
    const std::lock_guard lock(mutex_);
    for (const PendingFrame& pending : batch) --in_flight_[static_cast<size_t>(pending.stream)];
  }
  drained_.notify_all();
}

void FrameScheduler::submit(int stream, DecodedFrame frame) {
  {
    const std::lock_guard lock(mutex_);
    EF_ASSERT(stream >= 0 && static_cast<size_t>(stream) < queues_.size() &&
              streams_[static_cast<size_t>(stream)].stats != nullptr);
    std::deque<DecodedFrame>& queue = queues_[static_cast<size_t>(stream)];
    const StreamSlot& slot = streams_[static_cast<size_t>(stream)];
    if (closed_) {
      slot.stats->dropped.fetch_add(1);
      return;
    }
    if (queue.size() >= static_cast<size_t>(slot.queue_size)) {
      queue.pop_front();
      slot.stats->dropped.fetch_add(1);
    }
    queue.push_back(std::move(frame));
  }
  ready_.notify_one();
}

size_t FrameScheduler::queued_locked() const {
  size_t total = 0;
  for (const auto& queue : queues_) total += queue.size();
  return total;
}

size_t FrameScheduler::queued() const {
  const std::lock_guard lock(mutex_);
  return queued_locked();
}

void FrameScheduler::take_round_robin(std::vector<PendingFrame>& batch) {
  const size_t count = queues_.size();
  if (count == 0) return;
  bool took = true;
  while (batch.size() < static_cast<size_t>(max_batch_) && took) {
    took = false;
    for (size_t step = 0; step < count && batch.size() < static_cast<size_t>(max_batch_); ++step) {
      const size_t stream = (next_stream_ + step) % count;
      std::deque<DecodedFrame>& queue = queues_[stream];
      if (queue.empty()) continue;
      batch.push_back({static_cast<int>(stream), std::move(queue.front())});
      queue.pop_front();
      ++in_flight_[stream];
      took = true;
    }
  }
  next_stream_ = (next_stream_ + 1) % count;
}

std::vector<PendingFrame> FrameScheduler::next_batch() {
  std::vector<PendingFrame> batch;
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [&] { return closed_ || queued_locked() > 0; });
  if (max_batch_ > 1 && !closed_ && batch_timeout_.count() > 0) {
    const auto deadline = std::chrono::steady_clock::now() + batch_timeout_;
    ready_.wait_until(lock, deadline, [&] { return closed_ || queued_locked() >= static_cast<size_t>(max_batch_); });
  }
  take_round_robin(batch);
  return batch;
}

void FrameScheduler::close() {
  {
    const std::lock_guard lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
}

}  // namespace edgefuse
