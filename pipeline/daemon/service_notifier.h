// Tells systemd (Type=notify units) how the daemon is doing: READY=1 once the models are loaded and
// the streams started, WATCHDOG=1 while the supervision loop runs (a hung daemon stops pinging and
// systemd restarts it after WatchdogSec), RELOADING=1 / STOPPING=1 around reloads and shutdown,
// STATUS= a one-line summary shown by `systemctl status`. Without NOTIFY_SOCKET (not started by
// systemd) every call does nothing; without libsystemd at build time likewise.
#pragma once

#include <chrono>
#include <string_view>

namespace edgefuse {

class ServiceNotifier {
 public:
  ServiceNotifier();  // reads NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID through libsystemd

  bool active() const { return active_; }
  std::chrono::microseconds watchdog_interval() const { return watchdog_; }  // 0 when off

  void ready(std::string_view status);
  void reloading();
  void stopping();
  void status(std::string_view status);
  // Pings the watchdog when half its interval has passed since the last ping.
  void keep_alive();

 private:
  void send(std::string_view state);
  bool active_ = false;
  std::chrono::microseconds watchdog_{0};
  std::chrono::steady_clock::time_point last_ping_{};
};

}  // namespace edgefuse
