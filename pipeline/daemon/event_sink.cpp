#include "pipeline/daemon/event_sink.h"

#include <cerrno>
#include <cstring>
#include <memory>

namespace edgefuse {

Result<std::unique_ptr<JsonLinesSink>> JsonLinesSink::open(const std::string& path) {
  if (path == "-") return std::unique_ptr<JsonLinesSink>(new JsonLinesSink(stdout, "<stdout>", false));
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) return io_error("cannot open events file '", path, "': ", std::strerror(errno));
  return std::unique_ptr<JsonLinesSink>(new JsonLinesSink(file, path, true));
}

JsonLinesSink::~JsonLinesSink() {
  if (owned_) std::fclose(file_);
}

Status JsonLinesSink::write(std::string_view line) {
  const std::lock_guard lock(mutex_);
  const bool written = std::fwrite(line.data(), 1, line.size(), file_) == line.size() &&
                       std::fputc('\n', file_) != EOF && std::fflush(file_) == 0;
  if (!written) return io_error("cannot write events to '", path_, "': ", std::strerror(errno));
  ++lines_written_;
  return Status::ok();
}

int64_t JsonLinesSink::lines_written() const {
  const std::lock_guard lock(mutex_);
  return lines_written_;
}

}  // namespace edgefuse
