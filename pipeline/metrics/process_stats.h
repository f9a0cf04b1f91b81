// The daemon's own process figures for /metrics (the process_* metrics Prometheus clients
// conventionally export), read from Linux's /proc/self.
#pragma once

#include <cstdint>

#include "runtime/status.h"

namespace edgefuse {

struct ProcessStats {
  uint64_t resident_bytes = 0;    // /proc/self/statm resident pages * page size
  uint64_t virtual_bytes = 0;     // /proc/self/statm size * page size
  int64_t open_fds = 0;           // entries in /proc/self/fd (not counting the one used to list it)
  int64_t threads = 0;            // "Threads:" in /proc/self/status
  double cpu_seconds = 0;         // user + system time
  double start_time_seconds = 0;  // process start, seconds since the Unix epoch
  double uptime_seconds = 0;      // now - start
};

// io_error naming the file when /proc is missing or unreadable (not Linux, hardened container).
Result<ProcessStats> read_process_stats();

}  // namespace edgefuse
