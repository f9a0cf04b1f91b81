#include "pipeline/daemon/service_notifier.h"

#include <cstdlib>
#include <string>

#if EDGEFUSE_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace edgefuse {

ServiceNotifier::ServiceNotifier() {
#if EDGEFUSE_HAVE_SYSTEMD
  active_ = std::getenv("NOTIFY_SOCKET") != nullptr;
  uint64_t usec = 0;
  if (active_ && sd_watchdog_enabled(0, &usec) > 0) watchdog_ = std::chrono::microseconds(usec);
#endif
}

void ServiceNotifier::send(std::string_view state) {
#if EDGEFUSE_HAVE_SYSTEMD
  if (!active_) return;
  const std::string text(state);
  sd_notify(0, text.c_str());
#else
  (void)state;
#endif
}

void ServiceNotifier::ready(std::string_view status_line) {
  send("READY=1\nSTATUS=" + std::string(status_line));
  last_ping_ = std::chrono::steady_clock::now();
}

void ServiceNotifier::reloading() {
  send("RELOADING=1\nSTATUS=reloading the configuration");
}

void ServiceNotifier::stopping() {
  send("STOPPING=1\nSTATUS=draining queued frames");
}

void ServiceNotifier::status(std::string_view status_line) {
  send("STATUS=" + std::string(status_line));
}

void ServiceNotifier::keep_alive() {
  if (watchdog_.count() == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ping_ < watchdog_ / 2) return;
  last_ping_ = now;
  send("WATCHDOG=1");
}

}  // namespace edgefuse
