// Where tests find the real models and images: EDGEFUSE_ASSETS_DIR in the environment, else the
// CMake cache entry of the same name (default ../shared). A test that needs an asset calls
// ASSET_OR_SKIP; it skips with a message when the asset is missing, unless
// EDGEFUSE_REQUIRE_ASSETS=1 (set by CI), where a missing asset is a failure.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace edgefuse::test {

std::filesystem::path assets_dir();
bool assets_required();
// Full path of `relative` (e.g. "models/yolox_nano.onnx") under the assets folder, or empty when absent.
std::filesystem::path find_asset(const std::string& relative);

}  // namespace edgefuse::test

// Declares `var` as the asset's path, or skips (returns from) the test case when it is missing.
#define ASSET_OR_SKIP(var, relative)                                                                 \
  const std::filesystem::path var = ::edgefuse::test::find_asset(relative);                          \
  if (var.empty()) {                                                                                 \
    if (::edgefuse::test::assets_required()) {                                                       \
      FAIL("required asset missing: " << (::edgefuse::test::assets_dir() / (relative)).string());    \
    }                                                                                                \
    MESSAGE("SKIPPED: asset " << (relative) << " not found under " << ::edgefuse::test::assets_dir() \
                              << " (set EDGEFUSE_ASSETS_DIR)");                                      \
    return;                                                                                          \
  }
