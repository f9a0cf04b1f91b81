#include "tests/config/config_test_folder.h"

#include <doctest/doctest.h>

#include <fstream>
#include <random>

namespace edgefuse::test {

ConfigFolder::ConfigFolder() {
  std::random_device random;
  path_ = std::filesystem::temp_directory_path() / ("edgefuse_config_test_" + std::to_string(random()));
  std::filesystem::create_directories(path_ / "sub");
  for (const char* name : {"model.onnx", "sub/faces.onnx", "coco.names", "street.mp4"}) write(name, "");
}

ConfigFolder::~ConfigFolder() {
  std::error_code error;
  std::filesystem::remove_all(path_, error);
}

std::filesystem::path ConfigFolder::write(const std::string& name, std::string_view text) const {
  const std::filesystem::path file = path_ / name;
  std::ofstream out(file, std::ios::binary);
  out << text;
  return file;
}

Result<DaemonConfig> ConfigFolder::parse(std::string_view yaml) const {
  return parse_config(yaml, path_, "test.yaml");
}

std::string ConfigFolder::error(std::string_view yaml) const {
  const Result<DaemonConfig> result = parse(yaml);
  CHECK_FALSE(result.is_ok());
  if (result.is_ok()) return "";
  CHECK(result.status().code() == StatusCode::kInvalidArgument);
  return result.status().message();
}

}  // namespace edgefuse::test
