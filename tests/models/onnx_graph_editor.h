// Appends initializers, nodes and graph inputs/outputs to an onnx::GraphProto: what the model
// writers under tests/models (re-dressed YOLOX, YOLO-shaped networks) build their graphs with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace edgefuse::test {

class GraphEditor {
 public:
  explicit GraphEditor(onnx::GraphProto& graph) : graph_(graph) {}

  void floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values);
  void ints(const std::string& name, const std::vector<int64_t>& values);  // rank 1
  // Nodes are named after their first output.
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output);
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs);
  // Elements [begin, end) of axis `axis` (opset 10+ Slice: bounds as inputs).
  std::string slice(const std::string& input, int64_t begin, int64_t end, int64_t axis, const std::string& output);
  std::string concat(const std::vector<std::string>& inputs, int64_t axis, const std::string& output);
  // A graph input or output of f32 with these dims.
  void input(const std::string& name, const std::vector<int64_t>& dims);
  void output(const std::string& name, const std::vector<int64_t>& dims);

  static void set_int(onnx::NodeProto* node, const std::string& name, int64_t value);
  static void set_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values);
  static void set_string(onnx::NodeProto* node, const std::string& name, const std::string& value);
  static void set_dims(onnx::ValueInfoProto* info, const std::vector<int64_t>& dims);

 private:
  onnx::GraphProto& graph_;
};

}  // namespace edgefuse::test
