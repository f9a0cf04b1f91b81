// read_process_stats: start time comes from /proc/self/stat field 22 (clock ticks after boot) plus
// the boot time "btime" in /proc/stat, the same derivation `ps` uses.
#include "pipeline/metrics/process_stats.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace edgefuse {
namespace {

// /proc files report size 0, so read until end of file rather than by size.
Result<std::string> read_text_file(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot read ", path);
  std::string text;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  close(fd);
  if (n < 0) return io_error("cannot read ", path);
  return text;
}

// The value after "key" at the start of a line ("Threads:\t7" -> "7").
bool find_keyed_value(const std::string& text, const std::string& key, std::string& value) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key, 0) == 0) {
      std::istringstream rest(line.substr(key.size()));
      return static_cast<bool>(rest >> value);
    }
  }
  return false;
}

Result<int64_t> count_open_fds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return io_error("cannot list /proc/self/fd");
  int64_t count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the directory stream's own descriptor
}

}  // namespace

Result<ProcessStats> read_process_stats() {
  ProcessStats stats;
  const double page_size = static_cast<double>(sysconf(_SC_PAGESIZE));
  const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));

  EF_ASSIGN_OR_RETURN(const std::string statm, read_text_file("/proc/self/statm"));
  uint64_t size_pages = 0, resident_pages = 0;
  if (!(std::istringstream(statm) >> size_pages >> resident_pages)) return io_error("cannot parse /proc/self/statm");
  stats.virtual_bytes = static_cast<uint64_t>(static_cast<double>(size_pages) * page_size);
  stats.resident_bytes = static_cast<uint64_t>(static_cast<double>(resident_pages) * page_size);

  EF_ASSIGN_OR_RETURN(stats.open_fds, count_open_fds());

  EF_ASSIGN_OR_RETURN(const std::string status, read_text_file("/proc/self/status"));
  std::string threads;
  if (!find_keyed_value(status, "Threads:", threads)) return io_error("no Threads: line in /proc/self/status");
  stats.threads = std::stoll(threads);

  // /proc/self/stat: "pid (comm) state ..." where comm may hold spaces and parentheses, so fields
  // are counted from the last ')'. After it come field 3 (state) onwards.
  EF_ASSIGN_OR_RETURN(const std::string stat, read_text_file("/proc/self/stat"));
  const auto comm_end = stat.rfind(')');
  if (comm_end == std::string::npos) return io_error("cannot parse /proc/self/stat");
  std::istringstream fields(stat.substr(comm_end + 1));
  std::vector<std::string> after_comm{std::istream_iterator<std::string>(fields), std::istream_iterator<std::string>()};
  constexpr size_t kUtime = 14 - 3, kStime = 15 - 3, kStartTime = 22 - 3;  // field numbers from proc(5)
  if (after_comm.size() <= kStartTime) return io_error("/proc/self/stat has too few fields");
  stats.cpu_seconds = (std::stod(after_comm[kUtime]) + std::stod(after_comm[kStime])) / ticks_per_second;
  const double started_after_boot = std::stod(after_comm[kStartTime]) / ticks_per_second;

  EF_ASSIGN_OR_RETURN(const std::string system_stat, read_text_file("/proc/stat"));
  std::string boot_time;
  if (!find_keyed_value(system_stat, "btime", boot_time)) return io_error("no btime line in /proc/stat");
  stats.start_time_seconds = std::stod(boot_time) + started_after_boot;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  stats.uptime_seconds = std::max(0.0, now - stats.start_time_seconds);
  return stats;
}

}  // namespace edgefuse
