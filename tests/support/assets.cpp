#include "tests/support/assets.h"

#include <cstdlib>

namespace edgefuse::test {

std::filesystem::path assets_dir() {
  if (const char* env = std::getenv("EDGEFUSE_ASSETS_DIR"); env != nullptr && *env != '\0') return env;
  return EDGEFUSE_DEFAULT_ASSETS_DIR;
}

bool assets_required() {
  const char* env = std::getenv("EDGEFUSE_REQUIRE_ASSETS");
  return env != nullptr && std::string(env) == "1";
}

std::filesystem::path find_asset(const std::string& relative) {
  std::filesystem::path path = assets_dir() / relative;
  std::error_code error;
  return std::filesystem::exists(path, error) ? path : std::filesystem::path();
}

}  // namespace edgefuse::test
