// Converts an ONNX GraphProto into the graph IR, node by node, through the op import table.
//
// Phases (driven by onnx_importer.cpp):
//   1. add_graph(): initializers, graph inputs, nodes (each validated by its import function),
//      graph outputs. Runs before ONNX's checker and shape inference ever see the model.
//   2. refine_descs(): fills value descriptions from shape inference.
//   3. finish(): deferred conversions that needed those descriptions, then Graph::verify().
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "models/onnx/attribute_reader.h"
#include "runtime/graph.h"

namespace edgefuse {

class GraphBuilder;

// The ValueInfo's tensor description: symbolic or missing dims become -1. nullopt when the value is
// not a tensor of a supported element type or has no shape. Errors for negative or oversized dims.
Result<std::optional<TensorDesc>> desc_from_value_info(const onnx::ValueInfoProto& info);

// What an op import function works with: the ONNX node, its attributes, and the IR node being
// built (op, name, inputs and outputs already resolved). It validates attributes, converts them to
// the opset-13 form on node().attrs, and may add constant inputs.
class NodeImportContext {
 public:
  NodeImportContext(GraphBuilder& builder, const onnx::NodeProto& proto, int index, int opset, Node& node,
                    AttributeReader& attrs);

  const onnx::NodeProto& proto() const { return proto_; }
  int opset() const { return opset_; }
  AttributeReader& attrs() { return attrs_; }
  Node& node() { return node_; }
  // "node 'conv3' (Conv, index 3)": prefix of every message about this node.
  const std::string& context() const { return attrs_.context(); }

  template <typename... Parts>
  Status invalid(const Parts&... parts) const {
    return invalid_model(context(), ": ", parts...);
  }
  template <typename... Parts>
  Status not_supported(const Parts&... parts) const {
    return unsupported(context(), ": ", parts...);
  }

  int input_count() const { return node_.input_count(); }
  bool has_input(int index) const { return node_.has_input(index); }
  // The input's data when it is an initializer (constant), else nullptr.
  const Tensor* constant_input(int index) const;
  // The input's description when known, else nullopt.
  std::optional<TensorDesc> input_desc(int index) const;
  int input_rank(int index) const;  // -1 when unknown
  int output_count() const { return static_cast<int>(node_.outputs.size()); }

  // Sets input `index` (growing the list with omitted inputs) to a new constant named after the node.
  void set_constant_input(int index, const std::string& suffix, Tensor value);
  // Sets input `index` to a scalar constant `value` whose element type follows input `like_input`'s
  // (a float type; fixed in finish() once shape inference has told it, f32 until then).
  void set_scalar_input_like(int index, const std::string& suffix, double value, int like_input);
  // Keeps the first `count` inputs.
  void keep_inputs(int count);
  // Runs `step` after shape inference has filled value descriptions (see GraphBuilder::finish).
  void defer(std::function<Status(GraphBuilder&)> step);

  // Axis checks against a rank (skipped when rank < 0); `what` names it in messages.
  Status check_axis(const std::string& what, int64_t axis, int rank) const;
  // Each axis in range (when rank >= 0) and named once.
  Status check_axes(const std::string& what, const std::vector<int64_t>& axes, int rank) const;

 private:
  GraphBuilder& builder_;
  const onnx::NodeProto& proto_;
  int index_;
  int opset_;
  Node& node_;
  AttributeReader& attrs_;
};

class GraphBuilder {
 public:
  GraphBuilder(int opset, std::string model_dir);

  // Phase 1: converts initializers, inputs, nodes and outputs.
  Status add_graph(const onnx::GraphProto& graph);
  // Phase 2: descriptions from (inferred) value infos; fills values whose description is unknown
  // and unknown dims (-1) of those whose rank agrees.
  Status refine_descs(const onnx::GraphProto& inferred);
  // Phase 3.
  Result<std::shared_ptr<Graph>> finish();

  Graph& graph() { return *graph_; }
  bool desc_known(ValueId id) const { return desc_known_.at(static_cast<size_t>(id)); }
  void set_desc(ValueId id, TensorDesc desc);
  // Adds an initializer with a name no other value has, derived from `base`.
  ValueId add_constant(const std::string& base, Tensor value);
  void defer(std::function<Status(GraphBuilder&)> step) { deferred_.push_back(std::move(step)); }

 private:
  Status add_initializers(const onnx::GraphProto& graph);
  Status add_inputs(const onnx::GraphProto& graph);
  Status index_producers(const onnx::GraphProto& graph);
  Status add_node(const onnx::NodeProto& proto, int index);
  Status add_outputs(const onnx::GraphProto& graph);
  ValueId add_value(const std::string& name, std::optional<TensorDesc> desc);
  Result<ValueId> resolve_input(const std::string& name, int index, const std::string& context) const;

  int opset_;
  std::string model_dir_;
  std::shared_ptr<Graph> graph_ = std::make_shared<Graph>();
  std::unordered_map<std::string, ValueId> by_name_;
  std::vector<bool> desc_known_;
  std::unordered_map<std::string, TensorDesc> declared_;  // value_info and graph output descriptions
  std::unordered_map<std::string, int> producer_index_;   // node output name -> ONNX node index
  std::vector<std::function<Status(GraphBuilder&)>> deferred_;
};

}  // namespace edgefuse
