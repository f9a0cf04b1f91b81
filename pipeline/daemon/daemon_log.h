// The daemon's log lines on stderr: "edgefuse[2026-12-02T15:04:05.123Z] message". One write per
// line so lines from different threads never interleave.
#pragma once

#include <string>

#include "runtime/status.h"

namespace edgefuse {

void daemon_log_line(const std::string& message);

template <typename... Parts>
void daemon_log(const Parts&... parts) {
  daemon_log_line(make_message(parts...));
}

}  // namespace edgefuse
