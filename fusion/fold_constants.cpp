// fold_constants: evaluates, once, what does not depend on the input data.
//
// Rules, walking the nodes in order while tracking each value's static description:
//   - a node whose present inputs are all initializers (Constant nodes included) is run with its
//     reference kernel and its outputs become initializers;
//   - a Shape node whose input's shape is fully static (graph inputs with no -1 dim, and values
//     whose shape rule gave static dims from static inputs) becomes an initializer, which lets
//     the exporters' Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains fold away next.
// Legality: no output of the node is a graph output (a graph output stays computed, so callers
// never receive the graph's own constant storage), and every output is at most
// kMaxFoldedBytes (a ConstantOfShape or Tile could otherwise blow up the model's memory).
// Nodes whose shape rule or kernel fails are left for the executor to report at run time.
#include <optional>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/op_table.h"

namespace edgefuse::fusion {

namespace {

constexpr size_t kMaxFoldedBytes = size_t{16} << 20;

bool fully_static(const TensorDesc& desc) {
  for (int64_t dim : desc.shape) {
    if (dim < 0) return false;
  }
  return true;
}

// Runs `node` with its reference kernel on `inputs` (with data, except a Shape node's input,
// which may be a meta tensor). Returns nothing when the node cannot or should not be folded.
std::optional<std::vector<Tensor>> evaluate(const Node& node, std::span<const Tensor* const> inputs) {
  std::vector<TensorDesc> descs;
  if (!infer_node(node, inputs, descs).is_ok() || descs.size() != node.outputs.size()) return std::nullopt;
  std::vector<Tensor> outputs;
  std::vector<Tensor*> output_ptrs;
  outputs.reserve(descs.size());
  for (const TensorDesc& desc : descs) {
    if (!fully_static(desc) || !validate_shape(desc.shape, dtype_size(desc.dtype)).is_ok()) return std::nullopt;
    if (desc.nbytes() > kMaxFoldedBytes) return std::nullopt;
    outputs.push_back(Tensor::empty(desc.dtype, desc.shape));
  }
  for (Tensor& output : outputs) output_ptrs.push_back(&output);
  if (!op_def(node.op).reference(KernelArgs{node, inputs, output_ptrs, nullptr}).is_ok()) return std::nullopt;
  return outputs;
}

}  // namespace

Status fold_constants(Graph& graph, PassReport& report) {
  // Per value: its data (initializers and folded values) or a meta tensor of its static shape.
  std::vector<std::optional<Tensor>> known = initially_known_values(graph);

  std::vector<bool> dead(graph.nodes().size(), false);
  std::vector<const Tensor*> inputs;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    inputs.clear();
    bool all_known = true;
    bool all_constant = true;
    for (ValueId input : node.inputs) {
      if (input == kNoValue) {
        inputs.push_back(nullptr);
        continue;
      }
      const std::optional<Tensor>& value = known[static_cast<size_t>(input)];
      all_known = all_known && value.has_value();
      all_constant = all_constant && value.has_value() && value->has_data();
      inputs.push_back(value ? &*value : nullptr);
    }
    if (!all_known) continue;

    bool produces_graph_output = false;
    for (ValueId output : node.outputs) produces_graph_output = produces_graph_output || is_graph_output(graph, output);
    const bool foldable = (all_constant || node.op == OpKind::kShape) && !produces_graph_output;
    if (foldable) {
      std::optional<std::vector<Tensor>> folded = evaluate(node, inputs);
      if (folded) {
        for (size_t o = 0; o < node.outputs.size(); ++o) {
          Value& value = graph.value(node.outputs[o]);
          value.desc = (*folded)[o].desc();
          value.initializer = (*folded)[o];
          value.producer = -1;
          known[static_cast<size_t>(node.outputs[o])] = (*folded)[o];
        }
        dead[n] = true;
        ++report.changes;
        report.details.push_back(make_message("folded ", graph.describe_node(static_cast<NodeId>(n))));
        continue;
      }
    }
    // Not folded: propagate static shapes so later Shape nodes can fold.
    std::vector<TensorDesc> descs;
    if (!infer_node(node, inputs, descs).is_ok() || descs.size() != node.outputs.size()) continue;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (!fully_static(descs[o])) continue;
      graph.value(node.outputs[o]).desc = descs[o];
      known[static_cast<size_t>(node.outputs[o])] = Tensor::meta(descs[o].dtype, descs[o].shape);
    }
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
