// The systemd notification protocol spoken for real: a unix datagram socket stands in for systemd's
// NOTIFY_SOCKET and receives what the daemon would send.
#include "pipeline/daemon/service_notifier.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace edgefuse {
namespace {

// A bound AF_UNIX datagram socket, exported as NOTIFY_SOCKET while alive.
class NotifySocket {
 public:
  NotifySocket() : path_(std::filesystem::temp_directory_path() / ("edgefuse_notify_" + std::to_string(getpid()))) {
    std::filesystem::remove(path_);
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path_.string().copy(address.sun_path, sizeof address.sun_path - 1);
    REQUIRE(bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    timeval timeout{.tv_sec = 2, .tv_usec = 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setenv("NOTIFY_SOCKET", path_.c_str(), 1);
  }
  ~NotifySocket() {
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    close(fd_);
    std::filesystem::remove(path_);
  }
  std::string receive() {
    char buffer[4096];
    const ssize_t size = recv(fd_, buffer, sizeof buffer, 0);
    return size > 0 ? std::string(buffer, static_cast<size_t>(size)) : std::string();
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

TEST_CASE("without NOTIFY_SOCKET the notifier is inactive and silent") {
  unsetenv("NOTIFY_SOCKET");
  ServiceNotifier notifier;
  CHECK(!notifier.active());
  notifier.ready("ignored");  // must not fail or block
  notifier.keep_alive();
}

#if EDGEFUSE_HAVE_SYSTEMD
TEST_CASE("READY, STATUS, WATCHDOG and STOPPING reach the notify socket") {
  NotifySocket socket;
  setenv("WATCHDOG_USEC", "200000", 1);  // 0.2 s: pings at most every 0.1 s
  ServiceNotifier notifier;
  REQUIRE(notifier.active());
  CHECK(notifier.watchdog_interval() == std::chrono::microseconds(200000));

  notifier.ready("1 model(s), 2 stream(s)");
  CHECK(socket.receive() == "READY=1\nSTATUS=1 model(s), 2 stream(s)");
  notifier.keep_alive();  // too soon after READY: nothing sent
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  notifier.keep_alive();
  CHECK(socket.receive() == "WATCHDOG=1");
  notifier.reloading();
  CHECK(socket.receive().rfind("RELOADING=1\n", 0) == 0);
  notifier.stopping();
  CHECK(socket.receive().rfind("STOPPING=1\n", 0) == 0);
}
#endif

}  // namespace
}  // namespace edgefuse
