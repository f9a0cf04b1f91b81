#include "tests/conformance/node_test_case.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "models/onnx/onnx_importer.h"
#include "models/onnx/op_importers.h"
#include "models/onnx/tensor_proto.h"

namespace edgefuse::test {

namespace {

namespace fs = std::filesystem;

template <typename Message>
bool read_proto(const fs::path& path, Message& message) {
  std::ifstream file(path, std::ios::binary);
  return file && message.ParseFromIstream(&file);
}

Result<Tensor> read_tensor(const fs::path& path) {
  onnx::TensorProto proto;
  if (!read_proto(path, proto)) return io_error("cannot parse ", path.filename().string());
  return tensor_from_proto(proto, path.parent_path().string());
}

// Reads prefix_0.pb, prefix_1.pb, ... until one is missing.
Result<std::vector<Tensor>> read_tensors(const fs::path& folder, const std::string& prefix) {
  std::vector<Tensor> tensors;
  for (int i = 0;; ++i) {
    const fs::path path = folder / (prefix + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(path)) break;
    Result<Tensor> tensor = read_tensor(path);
    if (!tensor.is_ok()) return tensor.status().with_context(path.filename().string());
    tensors.push_back(std::move(tensor).value());
  }
  return tensors;
}

bool is_float(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kF16;
}

std::string run_data_set(const std::shared_ptr<const Graph>& graph, const fs::path& data_set) {
  Result<std::vector<Tensor>> inputs = read_tensors(data_set, "input");
  if (!inputs.is_ok()) return "reading inputs: " + inputs.status().message();
  Result<std::vector<Tensor>> expected = read_tensors(data_set, "output");
  if (!expected.is_ok()) return "reading outputs: " + expected.status().message();
  if (inputs->size() != graph->inputs().size()) {
    return make_message("the data set has ", inputs->size(), " inputs, the graph ", graph->inputs().size());
  }
  for (const bool reference : {true, false}) {
    const char* kernels = reference ? "reference kernels" : "optimised kernels";
    Result<Executor> executor =
        Executor::create(graph, ExecutorOptions{.threads = 1, .reference_kernels = reference, .poison_arena = true});
    if (!executor.is_ok()) return make_message(kernels, ": ", executor.status().message());
    Result<std::vector<Tensor>> outputs = executor->run(*inputs);
    if (!outputs.is_ok()) return make_message(kernels, ": ", outputs.status().message());
    if (outputs->size() != expected->size()) {
      return make_message(kernels, ": ", outputs->size(), " outputs, expected ", expected->size());
    }
    for (size_t o = 0; o < outputs->size(); ++o) {
      const std::string mismatch = compare_output((*outputs)[o], (*expected)[o]);
      if (!mismatch.empty()) {
        return make_message(kernels, ": output ", o, " '", graph->value(graph->outputs()[o]).name, "': ", mismatch);
      }
    }
  }
  return "";
}

}  // namespace

std::string compare_output(const Tensor& actual, const Tensor& expected) {
  if (actual.dtype() != expected.dtype()) {
    return make_message("dtype ", dtype_name(actual.dtype()), ", expected ", dtype_name(expected.dtype()));
  }
  if (actual.shape() != expected.shape()) {
    return make_message("shape ", shape_to_string(actual.shape()), ", expected ", shape_to_string(expected.shape()));
  }
  for (int64_t i = 0; i < expected.numel(); ++i) {
    if (is_float(expected.dtype())) {
      const double a = actual.double_at(i);
      const double b = expected.double_at(i);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (a == b) continue;  // equal infinities
      if (!(std::fabs(a - b) <= kAtol + kRtol * std::fabs(b))) {
        return make_message("at index ", i, ": got ", a, ", expected ", b);
      }
    } else if (actual.int_at(i) != expected.int_at(i)) {
      return make_message("at index ", i, ": got ", actual.int_at(i), ", expected ", expected.int_at(i));
    }
  }
  return "";
}

NodeTestOutcome run_node_test(const fs::path& folder) {
  NodeTestOutcome outcome;
  onnx::ModelProto model;
  if (!read_proto(folder / "model.onnx", model)) {
    outcome.failure = "cannot parse model.onnx";
    return outcome;
  }
  outcome.supported = true;
  for (const onnx::NodeProto& node : model.graph().node()) {
    outcome.ops.insert(node.op_type());
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    if (!default_domain || find_op_importer(node.op_type()) == nullptr) outcome.supported = false;
  }
  if (!outcome.supported) return outcome;

  Result<std::shared_ptr<Graph>> graph = import_onnx_file((folder / "model.onnx").string());
  if (!graph.is_ok()) {
    outcome.failure = "import: " + graph.status().to_string();
    return outcome;
  }
  std::vector<fs::path> data_sets;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      data_sets.push_back(entry.path());
    }
  }
  std::sort(data_sets.begin(), data_sets.end());
  if (data_sets.empty()) outcome.failure = "no test data sets";
  for (const fs::path& data_set : data_sets) {
    outcome.failure = run_data_set(*graph, data_set);
    if (!outcome.failure.empty()) {
      outcome.failure = data_set.filename().string() + ": " + outcome.failure;
      break;
    }
  }
  return outcome;
}

}  // namespace edgefuse::test
