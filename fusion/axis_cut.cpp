#include "fusion/axis_cut.h"

#include "fusion/graph_edit.h"
#include "runtime/ops/axes.h"
#include "runtime/ops/ops.h"

namespace edgefuse::fusion {

namespace {

std::optional<AxisCut> split_cut(const Node& split, const TensorDesc& whole,
                                 const std::vector<std::optional<TensorDesc>>& descs, std::optional<int> axis) {
  const Result<int> split_axis =
      normalize_axis(split.attrs.get_int("axis", 0), static_cast<int>(whole.shape.size()), "axis");
  if (!split_axis.is_ok() || (axis && *axis != *split_axis)) return std::nullopt;
  AxisCut cut;
  cut.source = split.inputs[0];
  cut.axis = *split_axis;
  int64_t start = 0;
  for (ValueId output : split.outputs) {
    const std::optional<TensorDesc>& part = descs[static_cast<size_t>(output)];
    if (!part || part->shape.size() != whole.shape.size()) return std::nullopt;
    const int64_t end = start + part->shape[static_cast<size_t>(cut.axis)];
    cut.pieces.push_back(AxisPiece{output, start, end});
    start = end;
  }
  return cut;
}

std::optional<AxisCut> slice_cut(const Graph& graph, const Node& slice, const TensorDesc& whole,
                                 const std::vector<std::optional<TensorDesc>>& descs, std::optional<int> axis) {
  if (slice.outputs.size() != 1) return std::nullopt;
  const std::optional<TensorDesc>& part = descs[static_cast<size_t>(slice.outputs[0])];
  if (!part || part->shape.size() != whole.shape.size()) return std::nullopt;
  // The operands must be constants; the data only needs a description.
  const Tensor data = Tensor::meta(whole.dtype, whole.shape);
  std::vector<const Tensor*> inputs = {&data};
  for (size_t i = 1; i < slice.inputs.size(); ++i) {
    const Tensor* operand = slice.inputs[i] == kNoValue ? nullptr : constant_data(graph, slice.inputs[i]);
    if (slice.inputs[i] != kNoValue && operand == nullptr) return std::nullopt;
    inputs.push_back(operand);
  }
  const Result<SliceGeometry> geometry = slice_geometry(inputs);
  if (!geometry.is_ok()) return std::nullopt;
  if (!axis) {
    for (size_t d = 0; d < whole.shape.size(); ++d) {
      if (geometry->start[d] == 0 && geometry->shape[d] == whole.shape[d]) continue;
      if (axis) return std::nullopt;  // a second cut axis
      axis = static_cast<int>(d);
    }
    if (!axis) return std::nullopt;
  }
  const std::optional<int64_t> start = slice_start_on_axis(*geometry, whole.shape, *axis);
  if (!start) return std::nullopt;
  AxisCut cut;
  cut.source = slice.inputs[0];
  cut.axis = *axis;
  cut.pieces.push_back(AxisPiece{slice.outputs[0], *start, *start + part->shape[static_cast<size_t>(*axis)]});
  return cut;
}

}  // namespace

std::optional<AxisCut> axis_cut(const Graph& graph, NodeId node, const std::vector<std::optional<TensorDesc>>& descs,
                                std::optional<int> axis) {
  const Node& cutter = graph.node(node);
  if ((cutter.op != OpKind::kSlice && cutter.op != OpKind::kSplit) || !cutter.has_input(0)) return std::nullopt;
  const std::optional<TensorDesc>& whole = descs[static_cast<size_t>(cutter.inputs[0])];
  if (!whole || (axis && (*axis < 0 || *axis >= static_cast<int>(whole->shape.size())))) return std::nullopt;
  std::optional<AxisCut> cut = cutter.op == OpKind::kSplit ? split_cut(cutter, *whole, descs, axis)
                                                           : slice_cut(graph, cutter, *whole, descs, axis);
  if (cut) cut->cutter = node;
  return cut;
}

}  // namespace edgefuse::fusion
