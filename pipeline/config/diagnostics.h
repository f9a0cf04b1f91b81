// Collects validation problems so one run reports all of them (up to a cap), each located.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/status.h"

namespace edgefuse::config {

class Diagnostics {
 public:
  static constexpr size_t kMaxReported = 20;

  explicit Diagnostics(std::string origin) : origin_(std::move(origin)) {}

  // Records "<origin>: <path>: <message> (line N)[; <hint>]".
  void add(std::string_view path, int line, std::string_view message, std::string_view hint = {});
  bool has_errors() const { return !problems_.empty(); }
  // kInvalidArgument with one problem per line, ordered by config line, at most kMaxReported; ok when none.
  Status to_status() const;

 private:
  std::string origin_;
  struct Problem {
    int line;
    std::string text;
  };
  std::vector<Problem> problems_;
};

}  // namespace edgefuse::config
