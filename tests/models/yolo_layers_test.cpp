// The layers YOLOv5 and YOLOv8 exports are made of, in small networks of their shape with random
// weights (tests/models/yolo_architectures.h): C2f and C3 blocks (Split, residual bottlenecks,
// Concats), SPPF (three chained 5x5 MaxPools), nearest upsampling, and each family's Detect head:
// YOLOv8's DFL (Softmax over 16 bins, the fixed 1x1 Conv that takes their expectation), dist2bbox
// and Sigmoid scores; YOLOv5's rank-5 view of each level, Sigmoid, grid offsets, Pow and anchors
// (fused into windowed chains over each level's rows).
// Ours (imported and fused; optimised and reference kernels) against OpenCV DNN; recognised as the
// family and decoded by the Detector.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <opencv2/dnn.hpp>
#include <unistd.h>

#include "fusion/pass_manager.h"
#include "models/detector/detector.h"
#include "models/detector/model_loading.h"
#include "models/onnx/onnx_importer.h"
#include "runtime/executor.h"
#include "runtime/op_table.h"
#include "runtime/ops/pointwise_chain.h"
#include "tests/models/model_fixtures.h"
#include "tests/models/yolo_architectures.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

std::map<std::string, int> count_ops(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const Node& node : graph.nodes()) ++counts[std::string(op_name(node.op))];
  return counts;
}

int windowed_chains(const Graph& graph) {
  int count = 0;
  for (const Node& node : graph.nodes()) {
    if (node.op == OpKind::kPointwiseChain && pointwise_chain(node).value().window) ++count;
  }
  return count;
}

void check_small_yolo(DetectorFamily family) {
  const YoloArchitecture architecture =
      small_yolo(family == DetectorFamily::kYolov8 ? YoloHead::kYolov8 : YoloHead::kYolov5);
  const YoloModel model = build_yolo_model(architecture);
  const std::string& bytes = model.bytes;
  Result<std::shared_ptr<Graph>> imported = import_onnx_bytes(bytes, "");
  REQUIRE_MESSAGE(imported.is_ok(), imported.status().to_string());
  cv::dnn::Net opencv = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
  REQUIRE(!opencv.empty());
  LoadedModel reference{*imported, "", opencv, ""};

  std::mt19937 rng(80);
  const Tensor input = random_tensor(DType::kF32, {1, 3, architecture.size, architecture.size}, rng, 0.0, 1.0);
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
  if (family == DetectorFamily::kYolov5) {
    // Each level decodes xy and wh of its rows cut by Slices and joined again: two windowed chains.
    CHECK(after["Slice"] == 0);
    CHECK(windowed_chains(**fused) == 6);
  }

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
      if (what == "fused" && !reference_kernels) {
        // The levels' (YOLOv5) or the boxes' and scores' (YOLOv8) final Concat is written in place.
        REQUIRE(executor->memory_plan() != nullptr);
        CHECK(executor->memory_plan()->concats_into_outputs == 1);
      }
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
    CHECK(d.class_id < architecture.classes);
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

TEST_CASE("a model exported with a symbolic image size runs at the size it is given") {
  YoloArchitecture architecture = small_yolo(YoloHead::kYolov8);
  architecture.symbolic_image_size = true;
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("edgefuse_dynamic_" + std::to_string(::getpid()) + ".onnx");
  std::ofstream(path, std::ios::binary) << build_yolo_model(architecture).bytes;
  architecture.symbolic_image_size = false;
  const std::filesystem::path fixed_path = path.string() + ".fixed.onnx";
  std::ofstream(fixed_path, std::ios::binary) << build_yolo_model(architecture).bytes;

  // As declared, the size is unknown: no family fits, and the error says why.
  Result<std::shared_ptr<Graph>> as_declared = import_detector_model(path.string());
  REQUIRE_MESSAGE(as_declared.is_ok(), as_declared.status().to_string());
  Result<DetectorFamily> unknown = recognise_family(**as_declared);
  CHECK(unknown.status().message().find("give input-width and input-height, or --input-size") != std::string::npos);

  // Sized, it is the fixed-size model: recognised, fused alike, the same outputs.
  Result<std::shared_ptr<Graph>> sized = import_detector_model(path.string(), {128, 128});
  REQUIRE_MESSAGE(sized.is_ok(), sized.status().to_string());
  Result<std::shared_ptr<Graph>> fixed = import_detector_model(fixed_path.string(), {128, 128});
  REQUIRE_MESSAGE(fixed.is_ok(), fixed.status().to_string());
  CHECK(*recognise_family(**sized) == DetectorFamily::kYolov8);
  REQUIRE(optimize_graph(**sized).is_ok());
  REQUIRE(optimize_graph(**fixed).is_ok());
  CHECK((*sized)->nodes().size() == (*fixed)->nodes().size());
  std::mt19937 rng(81);
  const Tensor input = random_tensor(DType::kF32, {1, 3, 128, 128}, rng, 0.0, 1.0);
  Result<Executor> a = Executor::create(*sized), b = Executor::create(*fixed);
  REQUIRE(a.is_ok());
  REQUIRE(b.is_ok());
  const ErrorStats error = compare_tensors(a->run(std::span<const Tensor>(&input, 1)).value()[0],
                                           b->run(std::span<const Tensor>(&input, 1)).value()[0]);
  CHECK(error.relative_l2 == 0);

  // A size the graph cannot take is an import error naming it; a fixed model keeps its own size.
  Result<std::shared_ptr<Graph>> wrong = import_detector_model(path.string(), {96, 96});
  CHECK_FALSE(wrong.is_ok());
  CHECK(wrong.status().message().find("at 96x96") != std::string::npos);
  Result<std::shared_ptr<Graph>> resized = import_detector_model(fixed_path.string(), {256, 128});
  CHECK(resized.status().message().find("fixed at 128x128, not 256x128") != std::string::npos);
  CHECK_FALSE(import_detector_model(path.string(), {128, 0}).is_ok());
  std::filesystem::remove(path);
  std::filesystem::remove(fixed_path);
}
