// Where events go: a JSON-lines file (appended) or stdout. Thread-safe; each line is written and
// flushed whole, so a reader tailing the file never sees half an event and a crash loses none
// that write() returned from.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "runtime/status.h"

namespace edgefuse {

class JsonLinesSink {
 public:
  // "-" is stdout; otherwise the file is created or appended to (its folder must exist).
  static Result<std::unique_ptr<JsonLinesSink>> open(const std::string& path);
  ~JsonLinesSink();
  JsonLinesSink(const JsonLinesSink&) = delete;
  JsonLinesSink& operator=(const JsonLinesSink&) = delete;

  // Appends `line` and a newline. Errors (disk full) name the file.
  Status write(std::string_view line);
  int64_t lines_written() const;
  const std::string& path() const { return path_; }

 private:
  JsonLinesSink(std::FILE* file, std::string path, bool owned) : file_(file), path_(std::move(path)), owned_(owned) {}

  std::FILE* file_;
  std::string path_;
  bool owned_;
  mutable std::mutex mutex_;
  int64_t lines_written_ = 0;
};

}  // namespace edgefuse
