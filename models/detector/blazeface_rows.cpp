#include "models/detector/blazeface_rows.h"

#include <cmath>
#include <limits>
#include <string>

#include "models/detect/blazeface_decode.h"
#include "models/detector/family.h"

namespace edgefuse {
namespace {

ValueId add_concat(Graph& graph, const std::string& name, std::vector<ValueId> inputs, int64_t axis, Shape shape) {
  const ValueId output = graph.add_value(name, TensorDesc{DType::kF32, std::move(shape)});
  Node node;
  node.op = OpKind::kConcat;
  node.name = name;
  node.inputs = std::move(inputs);
  node.outputs = {output};
  node.attrs.set("axis", axis);
  graph.add_node(std::move(node));
  return output;
}

}  // namespace

Result<std::shared_ptr<Graph>> merge_blazeface_heads(const Graph& graph) {
  std::vector<Shape> shapes;
  for (ValueId output : graph.outputs()) shapes.push_back(graph.value(output).desc.shape);
  EF_ASSIGN_OR_RETURN(BlazeFaceOutputs roles, find_blazeface_outputs(shapes));
  auto merged = std::make_shared<Graph>(graph);
  const std::vector<ValueId> outputs = merged->outputs();
  // The batch as the heads declare it (1, or -1 once batching freed it).
  const int64_t batch = shapes[roles.scores[0]][0];
  std::vector<ValueId> heads;
  int64_t anchors = 0;
  for (size_t head = 0; head < 2; ++head) {
    const int64_t head_anchors = shapes[roles.regressors[head]][1];
    heads.push_back(add_concat(*merged, "blazeface_rows/head" + std::to_string(head),
                               {outputs[roles.scores[head]], outputs[roles.regressors[head]]}, 2,
                               {batch, head_anchors, kBlazeFaceRowChannels}));
    anchors = anchors < 0 || head_anchors < 0 ? -1 : anchors + head_anchors;
  }
  merged->outputs() = {add_concat(*merged, "blazeface_rows", heads, 1, {batch, anchors, kBlazeFaceRowChannels})};
  EF_RETURN_IF_ERROR(merged->verify());
  return merged;
}

std::optional<gpu::RowFilter> blazeface_row_filter(int input_size, float score_threshold, float iou_threshold,
                                                   int max_detections) {
  // Below about e^-69 the CPU's sigmoid (its logit clamped to -100) lets rows far below pass.
  constexpr float kLowestFiltered = 1e-30f;
  if (!(score_threshold >= kLowestFiltered)) return std::nullopt;
  // The selection needs only to keep every row whose f32 sigmoid reaches the threshold (the device
  // then scores each as the CPU does): the exact logit less a margin above f32 sigmoid's rounding,
  // which near 1 (within a few ulps of 1 - threshold) grows, so high thresholds select from 9 up.
  const double threshold = score_threshold;
  const double logit = threshold > 0.9999 ? 9.0 : std::log(threshold) - std::log1p(-threshold) - 0.01;
  gpu::RowFilter::AnchorNms nms;
  nms.input_size = input_size;
  for (const BlazeFaceGrid& grid : kBlazeFaceGrids) nms.grids.push_back({grid.cells, grid.anchors_per_cell});
  nms.score_threshold = score_threshold;
  nms.iou_threshold = iou_threshold;
  nms.max_detections = max_detections;
  gpu::RowFilter filter;
  filter.output = 0;
  filter.column = 0;
  filter.threshold = static_cast<float>(logit);
  filter.anchor_nms = std::move(nms);
  // Rows not brought back read as a logit whose score no threshold here passes.
  filter.fill = std::numeric_limits<float>::lowest();
  return filter;
}

}  // namespace edgefuse
