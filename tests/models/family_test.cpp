#include <doctest/doctest.h>

#include "models/detector/detector.h"
#include "tests/models/model_fixtures.h"
#include "tests/support/assets.h"

using namespace edgefuse;

namespace {

// A graph with only the declared inputs and outputs: enough for signature checks.
Graph signature_graph(const std::vector<Shape>& inputs, const std::vector<Shape>& outputs) {
  Graph graph;
  for (size_t i = 0; i < inputs.size(); ++i) {
    graph.inputs().push_back(graph.add_value("in" + std::to_string(i), {DType::kF32, inputs[i]}));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    graph.outputs().push_back(graph.add_value("out" + std::to_string(i), {DType::kF32, outputs[i]}));
  }
  return graph;
}

}  // namespace

TEST_CASE("family names round-trip") {
  for (DetectorFamily family : kDetectorFamilies) {
    Result<DetectorFamily> parsed = parse_family(family_name(family));
    REQUIRE(parsed.is_ok());
    CHECK(*parsed == family);
  }
  CHECK(family_name(DetectorFamily::kYolox) == "yolox");
  CHECK(family_name(DetectorFamily::kYolov5) == "yolov5");
  CHECK(family_name(DetectorFamily::kYolov8) == "yolov8");
  CHECK(family_name(DetectorFamily::kBlazeFace) == "blazeface");
  Result<DetectorFamily> unknown = parse_family("ssd");
  CHECK(unknown.status().code() == StatusCode::kInvalidArgument);
  CHECK(unknown.status().message().find("'ssd'") != std::string::npos);
}

TEST_CASE("recognise_family reads the family from input and output shapes") {
  SUBCASE("YOLOX, 416 and 640x480, batch unknown") {
    CHECK(*recognise_family(signature_graph({{1, 3, 416, 416}}, {{1, 3549, 85}})) == DetectorFamily::kYolox);
    CHECK(*recognise_family(signature_graph({{-1, 3, 480, 640}}, {{-1, 6300, 6}})) == DetectorFamily::kYolox);
  }
  SUBCASE("YOLOv5: three rows a cell, at 640 and 416x320") {
    CHECK(*recognise_family(signature_graph({{1, 3, 640, 640}}, {{1, 25200, 85}})) == DetectorFamily::kYolov5);
    CHECK(*recognise_family(signature_graph({{1, 3, 320, 416}}, {{-1, 3 * 2730, 6}})) == DetectorFamily::kYolov5);
  }
  SUBCASE("YOLOv8: channels first, one column a cell") {
    CHECK(*recognise_family(signature_graph({{1, 3, 640, 640}}, {{1, 84, 8400}})) == DetectorFamily::kYolov8);
    CHECK(*recognise_family(signature_graph({{1, 3, 320, 416}}, {{1, 5, 2730}})) == DetectorFamily::kYolov8);
  }
  SUBCASE("BlazeFace, outputs in any order") {
    CHECK(*recognise_family(
              signature_graph({{1, 128, 128, 3}}, {{1, 512, 1}, {1, 384, 1}, {1, 512, 16}, {1, 384, 16}})) ==
          DetectorFamily::kBlazeFace);
    CHECK(*recognise_family(
              signature_graph({{1, 256, 256, 3}}, {{1, 384, 16}, {1, 512, 1}, {1, 512, 16}, {1, 384, 1}})) ==
          DetectorFamily::kBlazeFace);
  }
  SUBCASE("unknown signatures are errors that say why") {
    Result<DetectorFamily> classifier = recognise_family(signature_graph({{1, 3, 224, 224}}, {{1, 1000}}));
    CHECK(classifier.status().code() == StatusCode::kInvalidModel);
    for (const char* family : {"not YOLOX", "not YOLOv5", "not YOLOv8"}) {
      CHECK(classifier.status().message().find(family) != std::string::npos);
    }
    CHECK(classifier.status().message().find("not BlazeFace") != std::string::npos);
    // YOLOX with a cell count that does not fit the input size.
    CHECK_FALSE(recognise_family(signature_graph({{1, 3, 416, 416}}, {{1, 3000, 85}})).is_ok());
    // Unknown spatial dims: the grid cannot be known.
    CHECK_FALSE(recognise_family(signature_graph({{1, 3, -1, -1}}, {{1, -1, 85}})).is_ok());
    // BlazeFace with a head missing.
    CHECK_FALSE(
        recognise_family(signature_graph({{1, 128, 128, 3}}, {{1, 512, 1}, {1, 512, 16}, {1, 384, 16}})).is_ok());
    // A YOLOv8 output with no class channel.
    CHECK_FALSE(recognise_family(signature_graph({{1, 3, 640, 640}}, {{1, 4, 8400}})).is_ok());
    // Two inputs.
    CHECK_FALSE(recognise_family(signature_graph({{1, 3, 416, 416}, {1}}, {{1, 3549, 85}})).is_ok());
  }
}

TEST_CASE("recognise_family asks for the family when the output's dims fit several") {
  // Unknown cell and channel dims: YOLOX, YOLOv5 and YOLOv8 all fit.
  Result<DetectorFamily> unsure = recognise_family(signature_graph({{1, 3, 640, 640}}, {{1, -1, -1}}));
  CHECK(unsure.status().code() == StatusCode::kInvalidModel);
  CHECK(unsure.status().message().find("YOLOX, YOLOv5 and YOLOv8") != std::string::npos);
  CHECK(unsure.status().message().find("name the family") != std::string::npos);
}

TEST_CASE("recognise_family on the real models") {
  ASSET_OR_SKIP(yolox_path, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(front_path, "models/blazeface_front_128.onnx");
  ASSET_OR_SKIP(back_path, "models/blazeface_back_256.onnx");
  for (const auto& [path, family] :
       {std::pair{yolox_path, DetectorFamily::kYolox}, std::pair{front_path, DetectorFamily::kBlazeFace},
        std::pair{back_path, DetectorFamily::kBlazeFace}}) {
    CAPTURE(path.string());
    const test::LoadedModel& model = test::load_model(path);
    REQUIRE_MESSAGE(model.graph != nullptr, "import failed: " << model.import_error);
    Result<DetectorFamily> recognised = recognise_family(*model.graph);
    REQUIRE_MESSAGE(recognised.is_ok(), recognised.status().to_string());
    CHECK(*recognised == family);
  }
}
