#include "tests/models/yolo_architectures.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "models/detect/yolo_grid.h"
#include "tests/models/onnx_graph_editor.h"

namespace edgefuse::test {
namespace {

constexpr int kBins = 16;  // YOLOv8's DFL: each box side is a distribution over 16 distances
constexpr int kAnchorsPerCell = 3;
// YOLOv5's anchors (w, h in input pixels) at strides 8, 16, 32.
constexpr float kYolov5Anchors[3][3][2] = {
    {{10, 13}, {16, 30}, {33, 23}}, {{30, 61}, {62, 45}, {59, 119}}, {{116, 90}, {156, 198}, {373, 326}}};

class YoloWriter {
 public:
  YoloWriter(onnx::GraphProto& graph, uint32_t seed) : edit_(graph), rng_(seed) {}

  // Conv (k x k, stride s, padding k / 2 unless given) and, as exporters write SiLU, Sigmoid and Mul.
  std::string conv(const std::string& x, int cin, int cout, int k, int s, bool silu = true, int pad = -1) {
    const std::string name = "conv" + std::to_string(++count_);
    const float bound = std::sqrt(3.0f / static_cast<float>(cin * k * k));
    edit_.floats(name + "_w", {cout, cin, k, k}, uniform(static_cast<size_t>(cout) * cin * k * k, bound));
    edit_.floats(name + "_b", {cout}, uniform(static_cast<size_t>(cout), 0.1f));
    onnx::NodeProto* node = edit_.node("Conv", {x, name + "_w", name + "_b"}, name);
    const int p = pad < 0 ? k / 2 : pad;
    GraphEditor::set_ints(node, "kernel_shape", {k, k});
    GraphEditor::set_ints(node, "strides", {s, s});
    GraphEditor::set_ints(node, "pads", {p, p, p, p});
    if (!silu) return name;
    edit_.node("Sigmoid", {name}, name + "_sig");
    edit_.node("Mul", {name, name + "_sig"}, name + "_silu");
    return name + "_silu";
  }

  std::string add(const std::string& a, const std::string& b) {
    const std::string name = "add" + std::to_string(++count_);
    edit_.node("Add", {a, b}, name);
    return name;
  }

  std::string concat(const std::vector<std::string>& parts) {
    return edit_.concat(parts, 1, "cat" + std::to_string(++count_));
  }

  // YOLOv8's C2f: a 1x1 Conv split in halves; n bottlenecks (two 3x3 Convs, a residual Add when
  // `shortcut`) chained on the second half; every piece concatenated and mixed by a 1x1 Conv.
  std::string c2f(const std::string& x, int c1, int c2, int n, bool shortcut) {
    const int c = c2 / 2;
    const std::string mixed = conv(x, c1, 2 * c, 1, 1);
    const std::string name = "c2f" + std::to_string(++count_);
    edit_.ints(name + "_split", {c, c});
    GraphEditor::set_int(edit_.node("Split", {mixed, name + "_split"}, {name + "_a", name + "_b"}), "axis", 1);
    std::vector<std::string> parts = {name + "_a", name + "_b"};
    for (int i = 0; i < n; ++i) {
      const std::string inner = conv(conv(parts.back(), c, c, 3, 1), c, c, 3, 1);
      parts.push_back(shortcut ? add(parts.back(), inner) : inner);
    }
    return conv(concat(parts), (2 + n) * c, c2, 1, 1);
  }

  // YOLOv5's C3: two 1x1 Convs side by side; n bottlenecks (1x1 then 3x3 Conv, a residual Add when
  // `shortcut`) on the first; both concatenated and mixed by a 1x1 Conv.
  std::string c3(const std::string& x, int c1, int c2, int n, bool shortcut) {
    const int c = c2 / 2;
    std::string a = conv(x, c1, c, 1, 1);
    for (int i = 0; i < n; ++i) {
      const std::string inner = conv(conv(a, c, c, 1, 1), c, c, 3, 1);
      a = shortcut ? add(a, inner) : inner;
    }
    return conv(concat({a, conv(x, c1, c, 1, 1)}), 2 * c, c2, 1, 1);
  }

  // SPPF: 1x1 Conv, three chained 5x5 stride-1 MaxPools, all four concatenated, 1x1 Conv.
  std::string sppf(const std::string& x, int c1, int c2) {
    std::vector<std::string> parts = {conv(x, c1, c1 / 2, 1, 1)};
    for (int i = 0; i < 3; ++i) {
      const std::string pooled = parts.back() + "_pool";
      onnx::NodeProto* pool = edit_.node("MaxPool", {parts.back()}, pooled);
      GraphEditor::set_ints(pool, "kernel_shape", {5, 5});
      GraphEditor::set_ints(pool, "pads", {2, 2, 2, 2});
      parts.push_back(pooled);
    }
    return conv(concat(parts), 2 * c1, c2, 1, 1);
  }

  std::string upsample(const std::string& x) {
    if (written_.insert("up_scales").second) edit_.floats("up_scales", {4}, {1, 1, 2, 2});
    onnx::NodeProto* resize = edit_.node("Resize", {x, "", "up_scales"}, x + "_up");
    GraphEditor::set_string(resize, "mode", "nearest");
    GraphEditor::set_string(resize, "coordinate_transformation_mode", "asymmetric");
    GraphEditor::set_string(resize, "nearest_mode", "floor");
    return x + "_up";
  }

  // YOLOv8's Detect head over the levels (strides 8, 16, 32) to [1, 4 + classes, cells]: per level
  // box bins (3x3, 3x3, 1x1 Convs to 4 x 16) and class logits (the same to `classes`); then the DFL,
  // dist2bbox against the cell centres times the strides, and Sigmoid scores.
  void yolov8_head(const std::vector<std::pair<std::string, int>>& levels, int size, int classes) {
    const int c2 = std::max({16, levels[0].second / 4, 4 * kBins});
    const int c3 = std::max(levels[0].second, std::min(classes, 100));
    std::vector<std::string> flat;
    for (size_t i = 0; i < levels.size(); ++i) {
      const auto& [x, c] = levels[i];
      const std::string box = conv(conv(conv(x, c, c2, 3, 1), c2, c2, 3, 1), c2, 4 * kBins, 1, 1, false);
      const std::string cls = conv(conv(conv(x, c, c3, 3, 1), c3, c3, 3, 1), c3, classes, 1, 1, false);
      const int grid = size / kYoloStrides[i];
      const std::string name = "level" + std::to_string(i);
      edit_.ints(name + "_shape", {1, 4 * kBins + classes, static_cast<int64_t>(grid) * grid});
      edit_.node("Reshape", {concat({box, cls}), name + "_shape"}, name);
      flat.push_back(name);
    }
    const int64_t cells = yolo_cell_count(size, size);
    const std::string all = edit_.concat(flat, 2, "predictions");
    const std::string bins = edit_.slice(all, 0, 4 * kBins, 1, "bins");
    const std::string logits = edit_.slice(all, 4 * kBins, 4 * kBins + classes, 1, "logits");
    edit_.ints("bins_shape", {1, 4, kBins, cells});
    edit_.node("Reshape", {bins, "bins_shape"}, "bins4");
    GraphEditor::set_ints(edit_.node("Transpose", {"bins4"}, "bins_t"), "perm", {0, 2, 1, 3});
    GraphEditor::set_int(edit_.node("Softmax", {"bins_t"}, "bins_p"), "axis", 1);
    std::vector<float> distances(kBins);
    for (int i = 0; i < kBins; ++i) distances[static_cast<size_t>(i)] = static_cast<float>(i);
    edit_.floats("dfl_w", {1, kBins, 1, 1}, distances);
    GraphEditor::set_ints(edit_.node("Conv", {"bins_p", "dfl_w"}, "dist4"), "kernel_shape", {1, 1});
    edit_.ints("dist_shape", {1, 4, cells});
    edit_.node("Reshape", {"dist4", "dist_shape"}, "dist");
    const std::string lt = edit_.slice("dist", 0, 2, 1, "lt"), rb = edit_.slice("dist", 2, 4, 1, "rb");
    std::vector<float> xs, ys, strides;  // cell centres in grid units, and each cell's stride
    for (int stride : kYoloStrides) {
      const int grid = size / stride;
      for (int gy = 0; gy < grid; ++gy) {
        for (int gx = 0; gx < grid; ++gx) {
          xs.push_back(static_cast<float>(gx) + 0.5f);
          ys.push_back(static_cast<float>(gy) + 0.5f);
          strides.push_back(static_cast<float>(stride));
        }
      }
    }
    xs.insert(xs.end(), ys.begin(), ys.end());
    edit_.floats("anchor_points", {1, 2, cells}, xs);
    std::vector<float> box_strides;
    for (int side = 0; side < 4; ++side) box_strides.insert(box_strides.end(), strides.begin(), strides.end());
    edit_.floats("box_strides", {1, 4, cells}, box_strides);
    edit_.floats("two", {}, {2.0f});
    edit_.node("Sub", {"anchor_points", lt}, "x1y1");
    edit_.node("Add", {"anchor_points", rb}, "x2y2");
    edit_.node("Add", {"x1y1", "x2y2"}, "corner_sum");
    edit_.node("Div", {"corner_sum", "two"}, "cxcy");
    edit_.node("Sub", {"x2y2", "x1y1"}, "wh");
    edit_.node("Mul", {edit_.concat({"cxcy", "wh"}, 1, "box"), "box_strides"}, "dbox");
    edit_.node("Sigmoid", {logits}, "scores");
    edit_.concat({"dbox", "scores"}, 1, "output0");
    edit_.output("output0", {1, 4 + classes, cells});
  }

  // YOLOv5's Detect head: per level a 1x1 Conv viewed as [1, 3, 5 + classes, H, W], moved channels
  // last, Sigmoid; xy = (2 sig + grid - 0.5) x stride, wh = (2 sig)^2 x anchor; flattened to
  // [1, 3 x H x W, 5 + classes] and the levels concatenated.
  void yolov5_head(const std::vector<std::pair<std::string, int>>& levels, int size, int classes) {
    const int64_t outputs = 5 + classes;
    edit_.floats("two", {}, {2.0f});
    std::vector<std::string> flat;
    for (size_t i = 0; i < levels.size(); ++i) {
      const auto& [x, c] = levels[i];
      const int stride = kYoloStrides[i], grid = size / stride;
      const std::string raw = conv(x, c, kAnchorsPerCell * static_cast<int>(outputs), 1, 1, false);
      const std::string name = "level" + std::to_string(i);
      edit_.ints(name + "_view", {1, kAnchorsPerCell, outputs, grid, grid});
      edit_.node("Reshape", {raw, name + "_view"}, name + "_5d");
      GraphEditor::set_ints(edit_.node("Transpose", {name + "_5d"}, name + "_last"), "perm", {0, 1, 3, 4, 2});
      edit_.node("Sigmoid", {name + "_last"}, name + "_sig");
      const std::string xy = edit_.slice(name + "_sig", 0, 2, 4, name + "_xy_sig");
      const std::string wh = edit_.slice(name + "_sig", 2, 4, 4, name + "_wh_sig");
      const std::string rest = edit_.slice(name + "_sig", 4, outputs, 4, name + "_scores");
      std::vector<float> offsets, sizes;  // [1, 3, grid, grid, 2] each
      for (const auto& anchor : kYolov5Anchors[i]) {
        for (int gy = 0; gy < grid; ++gy) {
          for (int gx = 0; gx < grid; ++gx) {
            offsets.insert(offsets.end(), {static_cast<float>(gx) - 0.5f, static_cast<float>(gy) - 0.5f});
            sizes.insert(sizes.end(), {anchor[0], anchor[1]});
          }
        }
      }
      const std::vector<int64_t> dims = {1, kAnchorsPerCell, grid, grid, 2};
      edit_.floats(name + "_grid", dims, offsets);
      edit_.floats(name + "_anchors", dims, sizes);
      edit_.floats(name + "_stride", {}, {static_cast<float>(stride)});
      edit_.node("Mul", {xy, "two"}, name + "_xy2");
      edit_.node("Add", {name + "_xy2", name + "_grid"}, name + "_xyg");
      edit_.node("Mul", {name + "_xyg", name + "_stride"}, name + "_xy");
      edit_.node("Mul", {wh, "two"}, name + "_wh2");
      edit_.node("Pow", {name + "_wh2", "two"}, name + "_wh4");
      edit_.node("Mul", {name + "_wh4", name + "_anchors"}, name + "_wh");
      const std::string rows = edit_.concat({name + "_xy", name + "_wh", rest}, 4, name + "_rows");
      edit_.ints(name + "_flat_shape", {1, static_cast<int64_t>(kAnchorsPerCell) * grid * grid, outputs});
      edit_.node("Reshape", {rows, name + "_flat_shape"}, name + "_flat");
      flat.push_back(name + "_flat");
    }
    edit_.concat(flat, 1, "output0");
    edit_.output("output0", {1, kAnchorsPerCell * yolo_cell_count(size, size), outputs});
  }

 private:
  std::vector<float> uniform(size_t n, float bound) {
    std::uniform_real_distribution<float> pick(-bound, bound);
    std::vector<float> v(n);
    for (float& x : v) x = pick(rng_);
    return v;
  }

  GraphEditor edit_;
  std::mt19937 rng_;
  int count_ = 0;
  std::set<std::string> written_;  // shared constants written so far
};

void yolov8_network(YoloWriter& w, const YoloArchitecture& a) {
  const auto& [w0, w1, w2, w3, w4] = a.widths;
  const auto& d = a.depths;
  const std::string p2 = w.c2f(w.conv(w.conv("images", 3, w0, 3, 2), w0, w1, 3, 2), w1, w1, d[0], true);
  const std::string p3 = w.c2f(w.conv(p2, w1, w2, 3, 2), w2, w2, d[1], true);
  const std::string p4 = w.c2f(w.conv(p3, w2, w3, 3, 2), w3, w3, d[2], true);
  const std::string p5 = w.sppf(w.c2f(w.conv(p4, w3, w4, 3, 2), w4, w4, d[3], true), w4, w4);
  const std::string n4 = w.c2f(w.concat({w.upsample(p5), p4}), w4 + w3, w3, 1, false);
  const std::string out3 = w.c2f(w.concat({w.upsample(n4), p3}), w3 + w2, w2, 1, false);
  const std::string out4 = w.c2f(w.concat({w.conv(out3, w2, w2, 3, 2), n4}), w2 + w3, w3, 1, false);
  const std::string out5 = w.c2f(w.concat({w.conv(out4, w3, w3, 3, 2), p5}), w3 + w4, w4, 1, false);
  w.yolov8_head({{out3, w2}, {out4, w3}, {out5, w4}}, a.size, a.classes);
}

void yolov5_network(YoloWriter& w, const YoloArchitecture& a) {
  const auto& [w0, w1, w2, w3, w4] = a.widths;
  const auto& d = a.depths;
  const std::string stem = w.conv("images", 3, w0, 6, 2, true, 2);
  const std::string p2 = w.c3(w.conv(stem, w0, w1, 3, 2), w1, w1, d[0], true);
  const std::string p3 = w.c3(w.conv(p2, w1, w2, 3, 2), w2, w2, d[1], true);
  const std::string p4 = w.c3(w.conv(p3, w2, w3, 3, 2), w3, w3, d[2], true);
  const std::string p5 = w.sppf(w.c3(w.conv(p4, w3, w4, 3, 2), w4, w4, d[3], true), w4, w4);
  const std::string lateral5 = w.conv(p5, w4, w3, 1, 1);
  const std::string n4 = w.c3(w.concat({w.upsample(lateral5), p4}), 2 * w3, w3, 1, false);
  const std::string lateral4 = w.conv(n4, w3, w2, 1, 1);
  const std::string out3 = w.c3(w.concat({w.upsample(lateral4), p3}), 2 * w2, w2, 1, false);
  const std::string out4 = w.c3(w.concat({w.conv(out3, w2, w2, 3, 2), lateral4}), 2 * w2, w3, 1, false);
  const std::string out5 = w.c3(w.concat({w.conv(out4, w3, w3, 3, 2), lateral5}), 2 * w3, w4, 1, false);
  w.yolov5_head({{out3, w2}, {out4, w3}, {out5, w4}}, a.size, a.classes);
}

}  // namespace

YoloArchitecture yolov5n(int size) {
  YoloArchitecture a;
  a.head = YoloHead::kYolov5;
  a.size = size;
  a.depths = {1, 2, 3, 1};
  return a;
}

YoloArchitecture yolov8n(int size) {
  YoloArchitecture a;
  a.head = YoloHead::kYolov8;
  a.size = size;
  a.depths = {1, 2, 2, 1};
  return a;
}

YoloArchitecture small_yolo(YoloHead head) {
  YoloArchitecture a;
  a.head = head;
  a.size = 128;
  a.classes = 3;
  a.widths = {8, 16, 16, 32, 32};
  a.depths = {1, 1, 1, 1};
  a.seed = 8;
  return a;
}

YoloModel build_yolo_model(const YoloArchitecture& architecture) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.set_producer_name("edgefuse-test-yolo-architectures");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(architecture.head == YoloHead::kYolov8 ? "yolov8-shaped" : "yolov5-shaped");
  GraphEditor(graph).input("images", {1, 3, architecture.size, architecture.size});
  if (architecture.symbolic_image_size) {
    onnx::TensorShapeProto* shape = graph.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->mutable_dim(2)->set_dim_param("height");
    shape->mutable_dim(3)->set_dim_param("width");
  }
  YoloWriter writer(graph, architecture.seed);
  if (architecture.head == YoloHead::kYolov8) {
    yolov8_network(writer, architecture);
    return {model.SerializeAsString(), 1, 1};
  }
  yolov5_network(writer, architecture);
  return {model.SerializeAsString(), 3, 3 * 4};
}

}  // namespace edgefuse::test
