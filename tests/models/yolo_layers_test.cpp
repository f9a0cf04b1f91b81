// The layers YOLOv5 and YOLOv8 exports are made of, in small networks of their shape with random
// weights (no trained model of either ships with the shared assets): C2f blocks (Split, a residual
// bottleneck, Concat of all three), SPPF (three chained 5x5 MaxPools), nearest upsampling, and each
// family's Detect head at strides 8, 16, 32:
//   YOLOv8: box and class branches, the DFL (Softmax over 16 bins, the fixed 1x1 Conv that takes
//           their expectation), dist2bbox and Sigmoid scores, concatenated into [1, 4 + classes, cells];
//   YOLOv5: a 1x1 Conv per level viewed as rank-5 [1, 3 anchors, 5 + classes, H, W], transposed to
//           channels last, Sigmoid, then xy = (2 sig + grid) x stride and wh = (2 sig)^2 x anchor,
//           flattened into [1, 3 x cells, 5 + classes].
// Ours (imported and fused; optimised and reference kernels) against OpenCV DNN; recognised as the
// family and decoded by the Detector.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <opencv2/dnn.hpp>

#include "fusion/pass_manager.h"
#include "models/detect/yolo_grid.h"
#include "models/detector/detector.h"
#include "runtime/executor.h"
#include "tests/models/model_fixtures.h"
#include "tests/onnx/onnx_test_models.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

constexpr int kSize = 128;
constexpr int kClasses = 3;
constexpr int kBins = 16;  // DFL: each box side is a distribution over 16 distances

class SmallYoloBuilder {
 public:
  SmallYoloBuilder() : m_(13), rng_(8) {}

  // Conv (k x k, stride s, "same" padding) and SiLU as exporters write it: Sigmoid, Mul.
  std::string conv(const std::string& x, int cin, int cout, int k, int s, bool silu = true) {
    const std::string name = "conv" + std::to_string(++count_);
    const float bound = std::sqrt(3.0f / static_cast<float>(cin * k * k));
    m_.initializer(name + "_w", {cout, cin, k, k}, uniform(static_cast<size_t>(cout * cin * k * k), bound));
    m_.initializer(name + "_b", {cout}, uniform(static_cast<size_t>(cout), 0.1f));
    onnx::NodeProto* node = m_.node("Conv", {x, name + "_w", name + "_b"}, {name});
    set_ints(node, "kernel_shape", {k, k});
    set_ints(node, "strides", {s, s});
    set_ints(node, "pads", {k / 2, k / 2, k / 2, k / 2});
    if (!silu) return name;
    m_.node("Sigmoid", {name}, {name + "_sig"});
    m_.node("Mul", {name, name + "_sig"}, {name + "_silu"});
    return name + "_silu";
  }

  // C2f: a 1x1 Conv split in two halves; a bottleneck (two 3x3 Convs and a residual Add) on the
  // second; all three concatenated and mixed by a 1x1 Conv.
  std::string c2f(const std::string& x, int c) {
    const std::string mixed = conv(x, c, c, 1, 1);
    const std::string name = "c2f" + std::to_string(++count_);
    m_.initializer_i64(name + "_split", {2}, {c / 2, c / 2});
    set_int(m_.node("Split", {mixed, name + "_split"}, {name + "_a", name + "_b"}), "axis", 1);
    const std::string inner = conv(conv(name + "_b", c / 2, c / 2, 3, 1), c / 2, c / 2, 3, 1);
    m_.node("Add", {name + "_b", inner}, {name + "_res"});
    set_int(m_.node("Concat", {name + "_a", name + "_b", name + "_res"}, {name + "_cat"}), "axis", 1);
    return conv(name + "_cat", 3 * c / 2, c, 1, 1);
  }

  // SPPF: 1x1 Conv, three chained 5x5 stride-1 MaxPools, all four concatenated, 1x1 Conv.
  std::string sppf(const std::string& x, int c) {
    std::vector<std::string> parts = {conv(x, c, c / 2, 1, 1)};
    for (int i = 0; i < 3; ++i) {
      const std::string pooled = parts.back() + "_pool";
      onnx::NodeProto* pool = m_.node("MaxPool", {parts.back()}, {pooled});
      set_ints(pool, "kernel_shape", {5, 5});
      set_ints(pool, "pads", {2, 2, 2, 2});
      parts.push_back(pooled);
    }
    const std::string name = "sppf" + std::to_string(++count_);
    set_int(m_.node("Concat", parts, {name}), "axis", 1);
    return conv(name, 2 * c, c, 1, 1);
  }

  std::string upsample(const std::string& x) {
    const std::string name = x + "_up";
    if (!scales_) m_.initializer("up_scales", {4}, {1, 1, 2, 2});
    scales_ = true;
    onnx::NodeProto* resize = m_.node("Resize", {x, "", "up_scales"}, {name});
    set_string(resize, "mode", "nearest");
    set_string(resize, "coordinate_transformation_mode", "asymmetric");
    set_string(resize, "nearest_mode", "floor");
    return name;
  }

  std::string concat(const std::vector<std::string>& parts, int axis) {
    const std::string name = "cat" + std::to_string(++count_);
    set_int(m_.node("Concat", parts, {name}), "axis", axis);
    return name;
  }

  // One level of YOLOv8's Detect head: [1, 4 x 16 + classes, cells] of raw box bins and class logits.
  std::string head_level(const std::string& x, int c, int cells) {
    const std::string box = conv(conv(x, c, 16, 3, 1), 16, 4 * kBins, 1, 1, false);
    const std::string cls = conv(conv(x, c, 16, 3, 1), 16, kClasses, 1, 1, false);
    const std::string both = concat({box, cls}, 1);
    const std::string name = both + "_flat";
    m_.initializer_i64(name + "_shape", {3}, {1, 4 * kBins + kClasses, cells});
    m_.node("Reshape", {both, name + "_shape"}, {name});
    return name;
  }

  // YOLOv8: the levels' predictions to [1, 4 + classes, cells]: DFL, dist2bbox against the cell
  // centres, times the strides; Sigmoid class scores.
  void detect_v8(const std::vector<std::string>& levels) {
    const int64_t cells = yolo_cell_count(kSize, kSize);
    const std::string all = concat(levels, 2);
    // Box bins and class logits apart (Slices: OpenCV 4.6 cannot import this Split of unequal parts).
    m_.initializer_i64("zero", {1}, {0});
    m_.initializer_i64("bins_end", {1}, {4 * kBins});
    m_.initializer_i64("logits_end", {1}, {4 * kBins + kClasses});
    m_.initializer_i64("axis1", {1}, {1});
    m_.node("Slice", {all, "zero", "bins_end", "axis1"}, {"bins"});
    m_.node("Slice", {all, "bins_end", "logits_end", "axis1"}, {"logits"});
    m_.initializer_i64("bins_shape", {4}, {1, 4, kBins, cells});
    m_.node("Reshape", {"bins", "bins_shape"}, {"bins4"});
    set_ints(m_.node("Transpose", {"bins4"}, {"bins_t"}), "perm", {0, 2, 1, 3});
    set_int(m_.node("Softmax", {"bins_t"}, {"bins_p"}), "axis", 1);
    std::vector<float> distances(kBins);
    for (int i = 0; i < kBins; ++i) distances[static_cast<size_t>(i)] = static_cast<float>(i);
    m_.initializer("dfl_w", {1, kBins, 1, 1}, distances);
    set_ints(m_.node("Conv", {"bins_p", "dfl_w"}, {"dist4"}), "kernel_shape", {1, 1});
    m_.initializer_i64("dist_shape", {3}, {1, 4, cells});
    m_.node("Reshape", {"dist4", "dist_shape"}, {"dist"});
    m_.initializer_i64("lt_ends", {1}, {2});
    m_.initializer_i64("rb_ends", {1}, {4});
    m_.node("Slice", {"dist", "zero", "lt_ends", "axis1"}, {"lt"});
    m_.node("Slice", {"dist", "lt_ends", "rb_ends", "axis1"}, {"rb"});
    std::vector<float> centres, strides;  // [1, 2, cells]: cell centres in grid units; each cell's stride
    std::vector<float> ys;
    for (int stride : kYoloStrides) {
      const int grid = kSize / stride;
      for (int gy = 0; gy < grid; ++gy) {
        for (int gx = 0; gx < grid; ++gx) {
          centres.push_back(static_cast<float>(gx) + 0.5f);
          ys.push_back(static_cast<float>(gy) + 0.5f);
          strides.push_back(static_cast<float>(stride));
        }
      }
    }
    centres.insert(centres.end(), ys.begin(), ys.end());
    m_.initializer("anchors", {1, 2, cells}, centres);
    // Strides for all four box rows: OpenCV 4.6 cannot broadcast a [1, cells] constant over them.
    std::vector<float> box_strides;
    for (int side = 0; side < 4; ++side) box_strides.insert(box_strides.end(), strides.begin(), strides.end());
    m_.initializer("strides", {1, 4, cells}, box_strides);
    m_.initializer("two", {}, {2.0f});
    m_.node("Sub", {"anchors", "lt"}, {"x1y1"});
    m_.node("Add", {"anchors", "rb"}, {"x2y2"});
    m_.node("Add", {"x1y1", "x2y2"}, {"sum"});
    m_.node("Div", {"sum", "two"}, {"cxcy"});
    m_.node("Sub", {"x2y2", "x1y1"}, {"wh"});
    const std::string box = concat({"cxcy", "wh"}, 1);
    m_.node("Mul", {box, "strides"}, {"dbox"});
    m_.node("Sigmoid", {"logits"}, {"scores"});
    set_int(m_.node("Concat", {"dbox", "scores"}, {"output0"}), "axis", 1);
    m_.output("output0", onnx::TensorProto::FLOAT, {1, 4 + kClasses, cells});
  }

  // YOLOv5: one level of `grid` x `grid` cells of `stride` px, anchors (w, h) in px, to
  // [1, 3 x cells, 5 + classes] of boxes in input pixels, objectness and class scores.
  std::string detect_v5_level(const std::string& x, int c, int grid, int stride, const float (&anchors)[3][2]) {
    constexpr int64_t kOutputs = 5 + kClasses;
    const std::string raw = conv(x, c, 3 * static_cast<int>(kOutputs), 1, 1, false);
    const std::string name = "v5_" + std::to_string(stride);
    m_.initializer_i64(name + "_view", {5}, {1, 3, kOutputs, grid, grid});
    m_.node("Reshape", {raw, name + "_view"}, {name + "_5d"});
    set_ints(m_.node("Transpose", {name + "_5d"}, {name + "_last"}), "perm", {0, 1, 3, 4, 2});
    m_.node("Sigmoid", {name + "_last"}, {name + "_sig"});
    const std::string xy = slice(name + "_sig", 0, 2, 4), wh = slice(name + "_sig", 2, 4, 4),
                      rest = slice(name + "_sig", 4, kOutputs, 4);
    // Cell offsets (gx - 0.5, gy - 0.5) and anchor sizes, [1, 3, grid, grid, 2] each.
    std::vector<float> offsets, sizes;
    for (const auto& anchor : anchors) {
      for (int gy = 0; gy < grid; ++gy) {
        for (int gx = 0; gx < grid; ++gx) {
          offsets.insert(offsets.end(), {static_cast<float>(gx) - 0.5f, static_cast<float>(gy) - 0.5f});
          sizes.insert(sizes.end(), {anchor[0], anchor[1]});
        }
      }
    }
    const std::vector<int64_t> dims = {1, 3, grid, grid, 2};
    m_.initializer(name + "_grid", dims, offsets);
    m_.initializer(name + "_anchors", dims, sizes);
    m_.initializer(name + "_stride", {}, {static_cast<float>(stride)});
    if (!v5_constants_) m_.initializer("v5_two", {}, {2.0f});
    v5_constants_ = true;
    m_.node("Mul", {xy, "v5_two"}, {name + "_xy2"});
    m_.node("Add", {name + "_xy2", name + "_grid"}, {name + "_xyg"});
    m_.node("Mul", {name + "_xyg", name + "_stride"}, {name + "_xy"});
    m_.node("Mul", {wh, "v5_two"}, {name + "_wh2"});
    m_.node("Pow", {name + "_wh2", "v5_two"}, {name + "_wh4"});
    m_.node("Mul", {name + "_wh4", name + "_anchors"}, {name + "_wh"});
    const std::string rows = concat({name + "_xy", name + "_wh", rest}, 4);
    m_.initializer_i64(name + "_flat_shape", {3}, {1, 3 * grid * grid, kOutputs});
    m_.node("Reshape", {rows, name + "_flat_shape"}, {name + "_flat"});
    return name + "_flat";
  }

  void detect_v5(const std::vector<std::string>& levels) {
    set_int(m_.node("Concat", levels, {"output0"}), "axis", 1);
    m_.output("output0", onnx::TensorProto::FLOAT, {1, 3 * yolo_cell_count(kSize, kSize), 5 + kClasses});
  }

  OnnxModelBuilder& model() { return m_; }

 private:
  std::vector<float> uniform(size_t n, float bound) {
    std::uniform_real_distribution<float> pick(-bound, bound);
    std::vector<float> v(n);
    for (float& x : v) x = pick(rng_);
    return v;
  }

  OnnxModelBuilder m_;
  std::mt19937 rng_;
  int count_ = 0;
  // Channels [begin, end) of `axis`.
  std::string slice(const std::string& x, int64_t begin, int64_t end, int64_t axis) {
    const std::string name = x + "_" + std::to_string(begin) + "_" + std::to_string(end);
    m_.initializer_i64(name + "_starts", {1}, {begin});
    m_.initializer_i64(name + "_ends", {1}, {end});
    m_.initializer_i64(name + "_axes", {1}, {axis});
    m_.node("Slice", {x, name + "_starts", name + "_ends", name + "_axes"}, {name});
    return name;
  }

  bool scales_ = false;
  bool v5_constants_ = false;
};

struct SmallYolo {
  std::string bytes;
  // What the head has beside its Convs' SiLUs (which must all become Conv epilogues).
  int head_sigmoids = 0, head_muls = 0;
};

// A YOLO-shaped network on a 128 x 128 input: backbone to strides 8, 16, 32 with C2f and SPPF, a
// top-down neck (upsample, concat, C2f), and the family's Detect head.
SmallYolo small_yolo(DetectorFamily family) {
  SmallYoloBuilder b;
  b.model().input("images", {1, 3, kSize, kSize});
  const std::string s2 = b.conv("images", 3, 8, 3, 2);
  const std::string s4 = b.c2f(b.conv(s2, 8, 16, 3, 2), 16);
  const std::string p3 = b.c2f(b.conv(s4, 16, 16, 3, 2), 16);              // stride 8
  const std::string p4 = b.c2f(b.conv(p3, 16, 32, 3, 2), 32);              // stride 16
  const std::string p5 = b.sppf(b.c2f(b.conv(p4, 32, 32, 3, 2), 32), 32);  // stride 32
  const std::string n4 = b.c2f(b.conv(b.concat({b.upsample(p5), p4}, 1), 64, 32, 1, 1), 32);
  const std::string n3 = b.c2f(b.conv(b.concat({b.upsample(n4), p3}, 1), 48, 16, 1, 1), 16);
  const int g3 = kSize / 8, g4 = kSize / 16, g5 = kSize / 32;
  if (family == DetectorFamily::kYolov8) {
    b.detect_v8({b.head_level(n3, 16, g3 * g3), b.head_level(n4, 32, g4 * g4), b.head_level(p5, 32, g5 * g5)});
    return {b.model().bytes(), 1, 1};
  }
  // YOLOv5s' anchors (w, h in px) of strides 8, 16, 32.
  constexpr float kAnchors[3][3][2] = {
      {{10, 13}, {16, 30}, {33, 23}}, {{30, 61}, {62, 45}, {59, 119}}, {{116, 90}, {156, 198}, {373, 326}}};
  b.detect_v5({b.detect_v5_level(n3, 16, g3, 8, kAnchors[0]), b.detect_v5_level(n4, 32, g4, 16, kAnchors[1]),
               b.detect_v5_level(p5, 32, g5, 32, kAnchors[2])});
  return {b.model().bytes(), 3, 3 * 4};
}

void check_small_yolo(DetectorFamily family) {
  const SmallYolo model = small_yolo(family);
  const std::string& bytes = model.bytes;
  Result<std::shared_ptr<Graph>> imported = import_onnx_bytes(bytes, "");
  REQUIRE_MESSAGE(imported.is_ok(), imported.status().to_string());
  cv::dnn::Net opencv = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
  REQUIRE(!opencv.empty());
  LoadedModel reference{*imported, "", opencv, ""};

  std::mt19937 rng(80);
  const Tensor input = random_tensor(DType::kF32, {1, 3, kSize, kSize}, rng, 0.0, 1.0);
  const std::vector<Tensor> expected = run_opencv(reference, input);
  REQUIRE(expected.size() == 1);

  Result<std::shared_ptr<Graph>> fused = import_onnx_bytes(bytes, "");
  REQUIRE(fused.is_ok());
  Result<std::vector<PassReport>> passes = optimize_graph(**fused);
  REQUIRE_MESSAGE(passes.is_ok(), passes.status().to_string());
  std::map<std::string, int> before = count_ops(**imported), after = count_ops(**fused);
  MESSAGE("nodes ", (*imported)->nodes().size(), " imported, ", (*fused)->nodes().size(), " fused");
  // Every SiLU (Sigmoid, Mul) became its Conv's epilogue; at most the head's own stay.
  CHECK(before["Sigmoid"] - model.head_sigmoids == before["Mul"] - model.head_muls);
  CHECK(after["Sigmoid"] <= model.head_sigmoids);
  CHECK(after["Mul"] <= model.head_muls);

  for (const auto& [graph, what] :
       {std::pair{*imported, std::string("imported")}, std::pair{*fused, std::string("fused")}}) {
    for (bool reference_kernels : {false, true}) {
      CAPTURE(what);
      CAPTURE(reference_kernels);
      Result<Executor> executor = Executor::create(graph, ExecutorOptions{.reference_kernels = reference_kernels});
      REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
      Result<std::vector<Tensor>> actual = executor->run(std::span<const Tensor>(&input, 1));
      REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
      REQUIRE((*actual)[0].shape() == expected[0].shape());
      const ErrorStats error = compare_tensors((*actual)[0], expected[0]);
      MESSAGE(what, std::string(reference_kernels ? " (reference kernels)" : ""), ": ", error.to_string());
      CHECK(error.relative_l2 <= 1e-5);
      CHECK(error.mismatched_nan == 0);
    }
  }

  Result<DetectorFamily> recognised = recognise_family(**fused);
  REQUIRE_MESSAGE(recognised.is_ok(), recognised.status().to_string());
  CHECK(*recognised == family);
  // Random weights find nothing real, but what the Detector keeps is decoded from those outputs:
  // scores at or above the threshold, boxes clipped to the image.
  DetectorOptions options;
  options.score_threshold = 0.25f;
  Result<Detector> detector = Detector::create(*fused, family, options);
  REQUIRE_MESSAGE(detector.is_ok(), detector.status().to_string());
  cv::Mat image(96, 160, CV_8UC3);
  cv::randu(image, 0, 256);
  Result<std::vector<Detection>> detections = detector->detect(image);
  REQUIRE_MESSAGE(detections.is_ok(), detections.status().to_string());
  MESSAGE(detections->size(), " detections at score 0.25 from random weights");
  CHECK(!detections->empty());  // sigmoid-ed random logits: some pass
  for (const Detection& d : *detections) {
    CHECK(d.score >= 0.25f);
    CHECK(d.class_id < kClasses);
    CHECK(d.box.x1 >= 0);
    CHECK(d.box.x2 <= 160);
    CHECK(d.box.y2 <= 96);
  }
}

}  // namespace

TEST_CASE("a YOLOv8-shaped network with random weights matches OpenCV DNN, fused and not") {
  check_small_yolo(DetectorFamily::kYolov8);
}

TEST_CASE("a YOLOv5-shaped network with random weights matches OpenCV DNN, fused and not") {
  check_small_yolo(DetectorFamily::kYolov5);
}
