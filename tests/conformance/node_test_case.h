// One ONNX node test folder (model.onnx, test_data_set_N/input_K.pb and output_K.pb): decides
// whether the importer supports its ops, and runs it through the executor.
#pragma once

#include <filesystem>
#include <set>
#include <string>

#include "runtime/executor.h"

namespace edgefuse::test {

// ONNX backend-test tolerance: |actual - expected| <= kAtol + kRtol * |expected|; NaNs equal.
inline constexpr double kRtol = 1e-3;
inline constexpr double kAtol = 1e-7;

struct NodeTestOutcome {
  bool supported = false;     // every node's op has an importer
  std::set<std::string> ops;  // the model's op types
  std::string failure;        // empty when it passed (or was not supported)
};

// Imports `folder`/model.onnx and runs every test data set with the given kernel choices.
NodeTestOutcome run_node_test(const std::filesystem::path& folder);

// Empty when `actual` matches `expected` (dtype, shape, values within tolerance), else the first
// difference.
std::string compare_output(const Tensor& actual, const Tensor& expected);

}  // namespace edgefuse::test
