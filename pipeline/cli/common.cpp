#include "pipeline/cli/common.h"

#include <filesystem>

#include "models/onnx/onnx_importer.h"

namespace edgefuse::cli {

OptionSpec model_option() {
  return {.name = "model", .value_name = "FILE", .description = "ONNX model file", .required = true};
}

OptionSpec threads_option() {
  return {.name = "threads",
          .type = OptionType::kInt,
          .value_name = "N",
          .default_value = "0",
          .description = "worker threads including the caller; 0: one per core",
          .min = 0,
          .max = 1024};
}

OptionSpec reference_option() {
  return {.name = "reference",
          .type = OptionType::kFlag,
          .description = "run the naive reference kernels (the test oracle) instead of the optimised ones"};
}

Result<std::shared_ptr<Graph>> load_model(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return Status(StatusCode::kNotFound, make_message("model file '", path, "' not found"));
  }
  Result<std::shared_ptr<Graph>> graph = import_onnx_file(path);
  if (!graph.is_ok()) return graph.status().with_context(make_message("model '", path, "'"));
  return graph;
}

ExecutorOptions executor_options(const ParsedArgs& args, bool has_reference_option) {
  ExecutorOptions options;
  options.threads = static_cast<int>(args.get_int("threads"));
  options.reference_kernels = has_reference_option && args.flag("reference");
  return options;
}

}  // namespace edgefuse::cli
