// EventSpool: a bounded, crash-safe queue of events on disk. Every event is appended before it is
// published and stays until it is acknowledged, so events survive broker outages and process
// crashes and are replayed after a restart.
//
// Layout of `dir`:
//   segment-<first sequence, 20 digits>.log   records in sequence order (format in spool_record.h)
//   acks.journal                              which sequences are finished (ack_journal.h)
//   lock                                      flock()ed while open: one process per spool
//
// Contracts:
// - Sequences start at 1, increase by one per append and are not reused across restarts (except the
//   sequence of a record lost to corruption at the end of the newest segment).
// - A record whose append() returned survives SIGKILL of the process (the data is in the kernel's page
//   cache); with `fsync` it also survives power loss (fdatasync per append and per acknowledgement).
// - A segment whose records are all finished is deleted. When an append would exceed `max_bytes`, the
//   oldest segments are deleted and their unacknowledged records counted in dropped() and logged.
// - A torn or corrupt record (crash during a write) ends its segment: it and what follows are
//   truncated with a log line when the spool opens.
// - All methods are thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/spool/ack_journal.h"
#include "pipeline/spool/spool_record.h"
#include "runtime/status.h"

namespace edgefuse {

struct SpoolOptions {
  std::filesystem::path dir;             // created when absent
  int64_t max_bytes = 64 << 20;          // bound on the segment files together
  int64_t segment_bytes = 4 << 20;       // a segment is closed once it reaches this size; clamped to max_bytes / 4
  bool fsync = false;                    // fdatasync every append and acknowledgement (power-loss safety)
  std::function<void(std::string)> log;  // one line per call; empty: stderr, "edgefuse: spool: " prefix
};

class EventSpool {
 public:
  static Result<std::unique_ptr<EventSpool>> open(SpoolOptions options);
  ~EventSpool();
  EventSpool(const EventSpool&) = delete;
  EventSpool& operator=(const EventSpool&) = delete;

  // Appends one event and returns its sequence. Fails on I/O errors and for a record larger than max_bytes.
  Result<uint64_t> append(std::string_view topic, std::string_view payload);
  // Up to `max_count` unacknowledged records with sequence > `after_sequence`, oldest first.
  std::vector<SpoolRecord> unacknowledged(uint64_t after_sequence, size_t max_count);
  // Marks a record delivered. Acknowledging a finished or dropped record again is a no-op; a sequence
  // never handed out is an invalid_argument.
  Status acknowledge(uint64_t sequence);

  int64_t depth() const;           // unacknowledged records
  int64_t bytes() const;           // size of the segment files
  int64_t dropped() const;         // unacknowledged records deleted to stay within max_bytes since open
  uint64_t last_sequence() const;  // the newest sequence handed out (0: none yet)

 private:
  struct Segment {
    std::filesystem::path path;
    uint64_t first_sequence = 0;
    uint64_t last_sequence = 0;  // first_sequence - 1 while empty
    int64_t bytes = 0;
    int64_t records = 0;
    int64_t finished = 0;  // records acknowledged or dropped
  };
  struct Location {
    uint64_t segment = 0;  // the segment's first sequence
    int64_t offset = 0;
    int64_t bytes = 0;
  };

  explicit EventSpool(SpoolOptions options);
  Status load();
  Status load_segment(Segment& segment, uint64_t& previous_sequence);
  Status make_room(int64_t record_bytes);
  Status start_segment(uint64_t first_sequence);
  void close_active();
  void delete_segment(std::map<uint64_t, Segment>::iterator it);
  void log(const std::string& line) const;

  SpoolOptions options_;
  mutable std::mutex mutex_;
  int lock_fd_ = -1;
  int active_fd_ = -1;  // the newest segment, open for appending; -1 when none is open
  AckJournal acks_;
  std::map<uint64_t, Segment> segments_;  // by first sequence
  std::map<uint64_t, Location> unacked_;  // by sequence
  uint64_t next_sequence_ = 1;
  int64_t bytes_ = 0;
  int64_t dropped_ = 0;
};

}  // namespace edgefuse
