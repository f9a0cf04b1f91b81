#include "pipeline/daemon/daemon_log.h"

#include <chrono>
#include <cstdio>

#include "pipeline/daemon/detection_event.h"
#include "pipeline/video/stream_credentials.h"

namespace edgefuse {

void daemon_log_line(const std::string& message) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string line = "edgefuse[" +
                           format_utc_iso8601(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()) +
                           "] " + scrub_secrets(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace edgefuse
