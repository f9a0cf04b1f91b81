#include "pipeline/cli/common.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "fusion/pass_manager.h"
#include "models/detector/model_loading.h"
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

OptionSpec no_fuse_option() {
  return {.name = "no-fuse",
          .type = OptionType::kFlag,
          .description =
              "the eager baseline: skip the graph fusion passes and the memory plan (one buffer per "
              "tensor; same as EDGEFUSE_NO_FUSION=1), e.g. to compare against them"};
}

OptionSpec input_size_option() {
  return {.name = "input-size",
          .value_name = "WxH",
          .description =
              "image size for a model exported with dynamic axes (its input's height and width "
              "symbolic), e.g. 640x640"};
}

OptionSpec device_option() {
  return {.name = "device",
          .value_name = "NAME",
          .default_value = "cpu",
          .description =
              "where inference runs: cpu, cuda (fails without a usable GPU) or auto (cuda when a GPU is "
              "visible)"};
}

OptionSpec precision_option() {
  return {.name = "precision",
          .value_name = "NAME",
          .default_value = "fp32",
          .description =
              "on the GPU, fp16 stores activations as 16-bit floats (the first frame picks the few layers "
              "whose inputs stay fp32) and multiplies dense Convs on fp16 inputs on tensor cores (sums in "
              "fp32; other math fp32); the CPU runs fp32"};
}

Result<GpuBackendOptions> gpu_options_from_args(const ParsedArgs& args) {
  const std::string& precision = args.get("precision");
  if (precision != "fp32" && precision != "fp16") {
    return invalid_argument("--precision: '", precision, "' is not one of fp32, fp16");
  }
  GpuBackendOptions options;
  options.fp16 = precision == "fp16";
  options.progress = [](const std::string& message) { std::fprintf(stderr, "edgefuse: %s\n", message.c_str()); };
  return options;
}

Result<InferenceDevice> device_from_args(const ParsedArgs& args) {
  Result<InferenceDevice> device = parse_inference_device(args.get("device"));
  if (!device.is_ok()) return device.status().with_context("--device");
  return device;
}

Result<bool> optimize_model(Graph& graph, const ParsedArgs& args) {
  if (args.flag("no-fuse") || fusion_disabled_by_env()) return false;
  EF_ASSIGN_OR_RETURN(const InferenceDevice device, device_from_args(args));
  Result<std::vector<PassReport>> reports =
      optimize_graph(graph, runs_on_gpu(device) ? cuda_fusion_options() : FusionOptions{});
  if (!reports.is_ok()) return reports.status();
  return true;
}

namespace {

Status check_model_file(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return Status(StatusCode::kNotFound, make_message("model file '", path, "' not found"));
  }
  return Status::ok();
}

}  // namespace

Result<std::shared_ptr<Graph>> load_model(const std::string& path) {
  EF_RETURN_IF_ERROR(check_model_file(path));
  Result<std::shared_ptr<Graph>> graph = import_onnx_file(path);
  if (!graph.is_ok()) return graph.status().with_context(make_message("model '", path, "'"));
  return graph;
}

Result<std::shared_ptr<Graph>> load_detector_model(const std::string& path, const ParsedArgs& args) {
  if (!args.has("input-size")) return load_model(path);
  const std::string text = args.get("input-size");
  ImageSize size;
  char separator = 0;
  std::istringstream in(text);
  if (!(in >> size.width >> separator >> size.height) || separator != 'x' || !in.eof() || size.width <= 0 ||
      size.height <= 0) {
    return invalid_argument("--input-size: expected WIDTHxHEIGHT such as 640x640, got '", text, "'");
  }
  EF_RETURN_IF_ERROR(check_model_file(path));
  Result<std::shared_ptr<Graph>> graph = import_detector_model(path, size);
  if (!graph.is_ok()) return graph.status().with_context(make_message("model '", path, "'"));
  return graph;
}

ExecutorOptions executor_options(const ParsedArgs& args, bool has_reference_option) {
  ExecutorOptions options;
  options.threads = static_cast<int>(args.get_int("threads"));
  options.reference_kernels = has_reference_option && args.flag("reference");
  // Without fusion the run is the eager baseline: the imported graph with one buffer per tensor,
  // no memory plan (what bench/bench_models times as "eager").
  options.plan_memory = !args.flag("no-fuse") && !fusion_disabled_by_env();
  return options;
}

}  // namespace edgefuse::cli
