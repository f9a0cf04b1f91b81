// Snapshots of notable frames: a JPEG of the whole frame with its detections (and the stream's
// zones and lines) drawn, written by a worker thread so that encoding never holds up inference.
//
// Files are written whole under a temporary name and renamed into place, so a reader never sees a
// partial image. The folder is kept under max_bytes by deleting the oldest snapshots (by
// modification time, those of earlier runs included). While the queue is full a new snapshot is
// not taken (counted as dropped), so a path once returned is always written (barring disk errors).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "models/detect/detection.h"
#include "pipeline/overlay/overlay_renderer.h"
#include "pipeline/video/decoded_frame.h"
#include "runtime/status.h"

namespace edgefuse {

struct SnapshotOptions {
  std::filesystem::path folder;   // created if missing
  int64_t max_bytes = 256 << 20;  // the folder's snapshots together (the newest stays, even alone above it)
  int quality = 85;               // JPEG, 1..100
  int queue_size = 4;             // snapshots waiting to be encoded, 1..64
  OverlayText text;               // labels, zones and lines drawn on each snapshot
};

struct SnapshotCounters {
  int64_t written = 0;
  int64_t dropped = 0;  // not taken: the queue was full
  int64_t failed = 0;   // could not be written (the first error is kept)
  int64_t removed = 0;  // deleted to keep the folder under max_bytes
};

class SnapshotWriter {
 public:
  static Result<std::unique_ptr<SnapshotWriter>> create(SnapshotOptions options);
  ~SnapshotWriter();
  SnapshotWriter(const SnapshotWriter&) = delete;
  SnapshotWriter& operator=(const SnapshotWriter&) = delete;

  // Queues the frame (shared, not copied) to be saved as <folder>/<name>.jpg, `name` a plain file
  // name; returns that path. Empty (nothing queued) while the queue is full and after close().
  std::filesystem::path submit(const DecodedFrame& frame, std::vector<Detection> detections, const std::string& name);
  // Writes what is queued and stops the worker; idempotent.
  void close();

  SnapshotCounters counters() const;
  Status error() const;  // the first write error, if any

 private:
  struct Item {
    DecodedFrame frame;
    std::vector<Detection> detections;
    std::filesystem::path path;
  };
  struct Stored {
    std::filesystem::path path;
    int64_t bytes;
  };
  explicit SnapshotWriter(SnapshotOptions options) : options_(std::move(options)) {}
  void run();
  Status write(Item& item);
  void keep_under_limit();

  SnapshotOptions options_;
  std::thread worker_;
  std::deque<Stored> stored_;  // oldest first (worker thread only, after create)
  int64_t stored_bytes_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable has_item_;
  std::deque<Item> queue_;
  bool closing_ = false;
  SnapshotCounters counters_;
  Status error_;
};

}  // namespace edgefuse
