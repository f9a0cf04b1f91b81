// read_process_stats on this test process: plausible figures, and the fd count follows an open().
#include "pipeline/metrics/process_stats.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace edgefuse {

TEST_CASE("process stats: plausible figures for this process") {
  auto stats = read_process_stats();
  REQUIRE_MESSAGE(stats.is_ok(), stats.status().to_string());
  CHECK(stats->resident_bytes > 1024 * 1024);  // a C++ test binary holds over 1 MiB
  CHECK(stats->resident_bytes < 64ull << 30);
  CHECK(stats->virtual_bytes >= stats->resident_bytes);
  CHECK(stats->open_fds >= 3);  // stdin, stdout, stderr
  CHECK(stats->threads >= 1);
  CHECK(stats->cpu_seconds >= 0);
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(stats->start_time_seconds > 1.5e9);  // after 2017
  CHECK(stats->start_time_seconds <= now + 1);
  CHECK(stats->uptime_seconds >= 0);
  CHECK(stats->uptime_seconds < 3600);  // this test process started moments ago
}

TEST_CASE("process stats: one more open file is one more fd") {
  auto before = read_process_stats();
  REQUIRE(before.is_ok());
  const int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  auto during = read_process_stats();
  close(fd);
  auto after = read_process_stats();
  REQUIRE(during.is_ok());
  REQUIRE(after.is_ok());
  CHECK(during->open_fds == before->open_fds + 1);
  CHECK(after->open_fds == before->open_fds);
}

TEST_CASE("process stats: the thread count follows a started thread") {
  auto before = read_process_stats();
  REQUIRE(before.is_ok());
  std::atomic<bool> release{false};
  std::thread extra([&release] {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  auto during = read_process_stats();
  release = true;
  extra.join();
  REQUIRE(during.is_ok());
  CHECK(during->threads == before->threads + 1);
}

}  // namespace edgefuse
