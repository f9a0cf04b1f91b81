// The daemon's per-model and per-stream state, shared by daemon.cpp (running them) and
// daemon_metrics.cpp (reporting on them). Private to pipeline/daemon.
#pragma once

#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "pipeline/daemon/daemon.h"
#include "pipeline/metrics/histogram.h"
#include "pipeline/motion/motion_gate.h"
#include "pipeline/tracking/iou_tracker.h"
#include "pipeline/tracking/track_journal.h"
#include "pipeline/zones/stream_clock.h"
#include "pipeline/zones/zone_monitor.h"

namespace edgefuse {

class OverlayOutput;
class SnapshotWriter;

struct Daemon::Stream {
  StreamConfig config;
  Model* model = nullptr;
  int slot = -1;                           // in its model's scheduler
  std::vector<int> class_filter;           // empty: every class
  ObjectFilter object_filter;              // config.masks and filters, applied after class_filter
  MotionGate motion;                       // config.motion_gate: judged on the source's thread alone
  IouTracker tracker;                      // config.track: ids for the detections, updated by the model's worker alone
  ZoneMonitor zones;                       // config.zones and lines, updated by the model's worker alone
  StreamClock clock;                       // the stream's own time (zones, track records), read by that worker alone
  TrackJournal journal;                    // events.tracks: one record per track, updated by that worker alone
  std::vector<int> zone_counts_published;  // over MQTT (retained), by the model's worker; empty: none yet
  std::vector<std::vector<ClassCount>> zone_class_counts_published;  // the same per zone and class
  std::vector<std::unique_ptr<Histogram>> zone_dwell_s;              // per zone: the stays that ended, in seconds
  StreamStats stats;
  std::unique_ptr<StreamSupervisor> supervisor;
  bool start_failed = false;
  int64_t last_frames_in = 0, last_processed = 0;       // at the previous statistics line
  std::deque<std::pair<double, int64_t>> rate_samples;  // (seconds, frames_in) over the last few seconds, for fps
  std::unique_ptr<OverlayOutput, void (*)(OverlayOutput*)> overlay{nullptr, nullptr};  // overlay-file/-port
  std::unique_ptr<SnapshotWriter, void (*)(SnapshotWriter*)> snapshots{nullptr, nullptr};
};

struct Daemon::Model {
  ModelConfig config;
  std::unique_ptr<ModelRunner> runner;
  std::unique_ptr<FrameScheduler> scheduler;
  std::thread worker;
  std::mutex slots_mutex;
  std::vector<Stream*> slots;  // scheduler slot -> stream; a slot is cleared only once its frames are finished
  Histogram inference_ms{inference_buckets_ms()};  // one detect() call (a batch)
  Histogram batch_size{{1, 2, 4, 8, 16, 32, 64}};
};

}  // namespace edgefuse
