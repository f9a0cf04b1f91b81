#include "tests/models/yolo_redress.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <vector>

#include <onnx/onnx_pb.h>

#include "models/detect/yolo_grid.h"
#include "tests/models/onnx_graph_editor.h"

namespace edgefuse::test {
namespace {

constexpr int kSize = 416;
constexpr int64_t kChannels = 85;

// Per cell (levels of strides 8, 16, 32 in order, rows within a level): its (gx, gy), and its stride.
void grid_constants(std::vector<float>& grid, std::vector<float>& strides) {
  for (int stride : kYoloStrides) {
    const int cells = kSize / stride;
    for (int gy = 0; gy < cells; ++gy) {
      for (int gx = 0; gx < cells; ++gx) {
        grid.push_back(static_cast<float>(gx));
        grid.push_back(static_cast<float>(gy));
        strides.push_back(static_cast<float>(stride));
      }
    }
  }
}

}  // namespace

std::string redress_yolox(const std::string& yolox_bytes, RedressAs as) {
  onnx::ModelProto model;
  if (!model.ParseFromString(yolox_bytes)) return "";
  onnx::GraphProto& graph = *model.mutable_graph();
  if (graph.input_size() < 1 || graph.output_size() != 1) return "";
  const std::string yolox_input = graph.input(0).name();
  const std::string yolox_output = graph.output(0).name();
  const int64_t cells = yolo_cell_count(kSize, kSize);

  // The interface nodes come first (ONNX wants nodes in topological order), YOLOX's after them.
  const google::protobuf::RepeatedPtrField<onnx::NodeProto> yolox_nodes = graph.node();
  graph.clear_node();
  GraphEditor edit(graph);
  graph.mutable_input(0)->set_name("images_rgb");
  edit.floats("redress_255", {}, {255.0f});
  edit.ints("redress_bgr", {2, 1, 0});
  edit.node("Mul", {"images_rgb", "redress_255"}, "redress_rgb_255");
  GraphEditor::set_int(edit.node("Gather", {"redress_rgb_255", "redress_bgr"}, yolox_input), "axis", 1);
  for (const onnx::NodeProto& node : yolox_nodes) *graph.add_node() = node;

  // cx, cy = (dx + gx) * s; w, h = exp(log w) * s.
  std::vector<float> grid, strides;
  grid_constants(grid, strides);
  edit.floats("redress_grid", {1, cells, 2}, grid);
  edit.floats("redress_strides", {1, cells, 1}, strides);
  const std::string offsets = edit.slice(yolox_output, 0, 2, 2, "redress_offsets");
  const std::string log_sizes = edit.slice(yolox_output, 2, 4, 2, "redress_log_sizes");
  const std::string objectness = edit.slice(yolox_output, 4, 5, 2, "redress_objectness");
  const std::string classes = edit.slice(yolox_output, 5, kChannels, 2, "redress_classes");
  edit.node("Add", {offsets, "redress_grid"}, "redress_cells");
  edit.node("Mul", {"redress_cells", "redress_strides"}, "redress_centres");
  edit.node("Exp", {log_sizes}, "redress_grid_sizes");
  edit.node("Mul", {"redress_grid_sizes", "redress_strides"}, "redress_sizes");

  graph.clear_output();
  onnx::ValueInfoProto* output = graph.add_output();
  output->set_name("output0");
  if (as == RedressAs::kYolov5) {
    const std::string rows = edit.concat({"redress_centres", "redress_sizes", objectness, classes}, 2, "redress_rows");
    std::vector<std::string> levels;
    int64_t begin = 0;
    for (int stride : kYoloStrides) {
      const int64_t level_cells = static_cast<int64_t>(kSize / stride) * (kSize / stride);
      const std::string name = "redress_level" + std::to_string(stride);
      const std::string level = edit.slice(rows, begin, begin + level_cells, 1, name);
      levels.push_back(edit.concat({level, level, level}, 1, name + "_anchors"));
      begin += level_cells;
    }
    edit.concat(levels, 1, "output0");
    GraphEditor::set_dims(output, {1, 3 * cells, kChannels});
  } else {
    edit.node("Mul", {objectness, classes}, "redress_scores");
    edit.concat({"redress_centres", "redress_sizes", "redress_scores"}, 2, "redress_predictions");
    GraphEditor::set_ints(edit.node("Transpose", {"redress_predictions"}, "output0"), "perm", {0, 2, 1});
    GraphEditor::set_dims(output, {1, kChannels - 1, cells});
  }
  return model.SerializeAsString();
}

std::string redress_yolox_file(const std::filesystem::path& yolox_model, RedressAs as) {
  std::ifstream in(yolox_model, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return in.good() ? redress_yolox(bytes.str(), as) : "";
}

}  // namespace edgefuse::test
