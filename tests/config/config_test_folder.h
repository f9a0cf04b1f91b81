// A temporary folder holding the files test configs refer to, and helpers to parse against it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "pipeline/config/config.h"

namespace edgefuse::test {

// Creates model.onnx, sub/faces.onnx, coco.names and street.mp4 (empty: parsing checks only that
// they exist); removes everything on destruction.
class ConfigFolder {
 public:
  ConfigFolder();
  ~ConfigFolder();
  ConfigFolder(const ConfigFolder&) = delete;
  ConfigFolder& operator=(const ConfigFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, std::string_view text) const;
  // parse_config with this folder as base and "test.yaml" as origin.
  Result<DaemonConfig> parse(std::string_view yaml) const;
  // The error message of a parse that must fail ("" and a failed check when it succeeded).
  std::string error(std::string_view yaml) const;

 private:
  std::filesystem::path path_;
};

}  // namespace edgefuse::test
