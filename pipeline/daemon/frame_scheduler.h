// The frames waiting for one model: a bounded queue per stream and the batching rule that feeds
// the model's worker.
//
// Drop policy: a stream's queue holds at most queue_size frames; a frame arriving at a full queue
// pushes out the oldest one (counted as dropped), so the model always works on the freshest video.
// Batching: the worker takes frames round-robin across streams (oldest first within a stream) up to
// max_batch, waiting at most batch_timeout for a batch to fill once its first frame is there.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "pipeline/daemon/stream_stats.h"
#include "pipeline/video/decoded_frame.h"

namespace edgefuse {

struct PendingFrame {
  int stream = 0;  // index into the scheduler's streams
  DecodedFrame frame;
};

class FrameScheduler {
 public:
  struct StreamSlot {
    int queue_size = 2;
    StreamStats* stats = nullptr;  // dropped is counted here; not owned
  };

  FrameScheduler(std::vector<StreamSlot> streams, int max_batch, std::chrono::milliseconds batch_timeout);

  // Streams come and go while the worker runs (configuration reloads). add_stream returns the slot
  // to submit with (a freed slot is reused). remove_stream waits until every frame of the slot
  // has been handed out and reported finished(), then frees it; its source must be stopped first.
  int add_stream(StreamSlot slot);
  void remove_stream(int stream);

  // From a source's streaming thread. Never blocks on the model.
  void submit(int stream, DecodedFrame frame);

  // Blocks until a batch is ready or close() was called and every queue is empty (then returns an
  // empty batch: the worker's signal to exit). Frames queued before close() are still handed out.
  std::vector<PendingFrame> next_batch();

  // The worker is done with a batch next_batch gave it (its events are written).
  void finished(const std::vector<PendingFrame>& batch);

  // No more frames will be submitted; next_batch drains what is queued, then returns empty.
  void close();
  size_t queued() const;

 private:
  size_t queued_locked() const;
  void take_round_robin(std::vector<PendingFrame>& batch);

  std::vector<StreamSlot> streams_;
  std::vector<std::deque<DecodedFrame>> queues_;
  std::vector<int> in_flight_;  // per slot: frames handed to the worker and not yet finished()
  int max_batch_;
  std::chrono::milliseconds batch_timeout_;
  size_t next_stream_ = 0;  // round-robin start, so no stream is favoured
  bool closed_ = false;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable drained_;  // a slot's frames are all finished
};

}  // namespace edgefuse
