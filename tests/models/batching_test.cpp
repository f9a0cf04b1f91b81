// Batching a batch-1 export: the batched graph must give each image exactly what a lone run gives
// (same kernels, so within float noise), for both families, and refuse what it cannot batch.
#include "models/detector/batching.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "fusion/pass_manager.h"
#include "models/detector/detector.h"
#include "models/detector/preprocess.h"
#include "models/onnx/onnx_importer.h"
#include "runtime/ops/ops.h"
#include "tests/models/model_fixtures.h"
#include "tests/models/yolo_architectures.h"
#include "tests/support/assets.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

// Stacks batch-of-one inputs into one [k, ...] tensor.
Tensor stack(const std::vector<PreprocessedImage>& images) {
  Shape shape = images.front().input.shape();
  const int64_t per_item = images.front().input.numel();
  shape[0] = static_cast<int64_t>(images.size());
  Tensor batch = Tensor::empty(DType::kF32, shape);
  for (size_t i = 0; i < images.size(); ++i) {
    std::memcpy(batch.data<float>() + static_cast<int64_t>(i) * per_item, images[i].input.data<float>(),
                static_cast<size_t>(per_item) * sizeof(float));
  }
  return batch;
}

void check_batched_equals_lone(const std::shared_ptr<const Graph>& graph, DetectorFamily family,
                               const std::vector<std::filesystem::path>& image_paths) {
  REQUIRE(graph != nullptr);
  DetectorOptions options;
  options.max_batch = static_cast<int>(image_paths.size());
  // Two threads on any host: a batch of three runs as two lanes of one image each (whole images
  // per thread, ExecutorOptions::batch_lanes), then the third on both threads.
  options.executor.threads = 2;
  Result<Detector> batched = Detector::create(graph, family, options);
  REQUIRE_MESSAGE(batched.is_ok(), batched.status().to_string());
  options.max_batch = 1;
  Result<Detector> lone = Detector::create(graph, family, options);
  REQUIRE(lone.is_ok());

  std::vector<PreprocessedImage> inputs;
  std::vector<Detector::SourceImage> sources;
  std::vector<cv::Mat> images;
  for (const std::filesystem::path& path : image_paths) {
    images.push_back(read_image(path));
    REQUIRE(!images.back().empty());
    Result<PreprocessedImage> input = family == DetectorFamily::kYolox
                                          ? preprocess_yolox(images.back(), lone->input_width(), lone->input_height())
                                          : preprocess_blazeface(images.back(), lone->input_width());
    REQUIRE(input.is_ok());
    sources.push_back({input->letterbox, images.back().cols, images.back().rows});
    inputs.push_back(std::move(*input));
  }
  Result<std::vector<std::vector<Detection>>> together = batched->detect_batch(stack(inputs), sources);
  REQUIRE_MESSAGE(together.is_ok(), together.status().to_string());
  REQUIRE(together->size() == image_paths.size());
  size_t total = 0;
  for (size_t i = 0; i < image_paths.size(); ++i) {
    CAPTURE(image_paths[i]);
    Result<std::vector<Detection>> alone = lone->detect(images[i]);
    REQUIRE(alone.is_ok());
    REQUIRE((*together)[i].size() == alone->size());
    for (size_t d = 0; d < alone->size(); ++d) {
      const Detection& a = (*alone)[d];
      const Detection& b = (*together)[i][d];
      CHECK(a.class_id == b.class_id);
      CHECK(b.score == doctest::Approx(a.score).epsilon(1e-4));
      CHECK(b.box.x1 == doctest::Approx(a.box.x1).epsilon(1e-4));
      CHECK(b.box.y2 == doctest::Approx(a.box.y2).epsilon(1e-4));
    }
    total += alone->size();
  }
  CHECK(total > 0);  // the photos have objects: the comparison compared something
}

}  // namespace

TEST_CASE("YOLOX-nano batched three photos at a time detects what it finds in each alone") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(dog, "data/images/dog.jpg");
  ASSET_OR_SKIP(person, "data/images/person.jpg");
  ASSET_OR_SKIP(horses, "data/images/horses.jpg");
  check_batched_equals_lone(load_model(model).graph, DetectorFamily::kYolox, {dog, person, horses});
}

TEST_CASE("YOLOX-nano fused, then batched (as the daemon does it), detects what it finds in each photo alone") {
  // The fuser folds the head's Concat into its Transpose for a batch of one; made dynamic after,
  // that Transpose writes one block per level and image.
  ASSET_OR_SKIP(model_path, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(dog, "data/images/dog.jpg");
  ASSET_OR_SKIP(person, "data/images/person.jpg");
  ASSET_OR_SKIP(horses, "data/images/horses.jpg");
  LoadedModel& model = load_model(model_path);
  REQUIRE(model.graph != nullptr);
  auto fused = std::make_shared<Graph>(*model.graph);
  REQUIRE(optimize_graph(*fused).is_ok());
  CHECK(std::any_of(fused->nodes().begin(), fused->nodes().end(),
                    [](const Node& node) { return node.attrs.has(kTransposeConcatAxis); }));
  check_batched_equals_lone(fused, DetectorFamily::kYolox, {dog, person, horses});
}

TEST_CASE("YOLOv5- and YOLOv8-shaped networks fused, then batched, equal their lone runs") {
  // The fuser's rewrites of these heads (windowed chains, Slices moved onto Concat inputs, the
  // Sigmoid onto the class Convs, SoftmaxExpectations per level, the stem pair) add Reshapes and
  // Slices of their own: made dynamic after fusion, each image must still get its lone result.
  for (const YoloHead head : {YoloHead::kYolov5, YoloHead::kYolov8}) {
    CAPTURE(static_cast<int>(head));
    Result<std::shared_ptr<Graph>> imported = import_onnx_bytes(build_yolo_model(small_yolo(head)).bytes, "");
    REQUIRE_MESSAGE(imported.is_ok(), imported.status().to_string());
    auto fused = std::make_shared<Graph>(**imported);
    REQUIRE(optimize_graph(*fused).is_ok());
    if (head == YoloHead::kYolov8) {
      CHECK(std::any_of(fused->nodes().begin(), fused->nodes().end(),
                        [](const Node& node) { return node.op == OpKind::kSoftmaxExpectation; }));
    }
    Result<std::shared_ptr<Graph>> batched = make_batch_dynamic(*fused);
    REQUIRE_MESSAGE(batched.is_ok(), batched.status().to_string());
    for (int threads : {1, 2}) {  // every kernel on the whole batch, and whole images per thread (lanes)
      CAPTURE(threads);
      ExecutorOptions options;
      options.threads = threads;
      const Status same = check_batch_equivalence(fused, *batched, 3, options);
      CHECK_MESSAGE(same.is_ok(), same.to_string());
    }
  }
}

TEST_CASE("BlazeFace refuses batching cleanly: its channel padding is a batch-1 constant") {
  // The export pads channels by concatenating a zero constant of batch 1 ([1, 4, 64, 64]), which no
  // batch but 1 can concatenate with; creation must fail with that reason, not run wrong.
  ASSET_OR_SKIP(model_path, "models/blazeface_front_128.onnx");
  LoadedModel& model = load_model(model_path);
  REQUIRE(model.graph != nullptr);
  DetectorOptions options;
  options.max_batch = 2;
  Result<Detector> batched = Detector::create(model.graph, DetectorFamily::kBlazeFace, options);
  REQUIRE(!batched.is_ok());
  CHECK(batched.status().message().find("Concat") != std::string::npos);
}

TEST_CASE("make_batch_dynamic frees the input batch and the batch-leading Reshape shapes only") {
  ASSET_OR_SKIP(model_path, "models/yolox_nano.onnx");
  LoadedModel& model = load_model(model_path);
  REQUIRE(model.graph != nullptr);
  Result<std::shared_ptr<Graph>> batched = make_batch_dynamic(*model.graph);
  REQUIRE(batched.is_ok());
  CHECK((*batched)->value((*batched)->inputs()[0]).desc.shape[0] == -1);
  CHECK(model.graph->value(model.graph->inputs()[0]).desc.shape[0] == 1);  // the original is untouched
  int rewritten = 0;
  for (const Node& node : (*batched)->nodes()) {
    if (node.op != OpKind::kReshape) continue;
    const Value& shape = (*batched)->value(node.inputs[1]);
    REQUIRE(shape.initializer.has_value());
    CHECK(shape.initializer->data<int64_t>()[0] != 1);
    rewritten += shape.initializer->data<int64_t>()[0] == 0;
  }
  CHECK(rewritten == 3);  // YOLOX's three head reshapes
  CHECK(check_batch_equivalence(model.graph, *batched, 2, {}).is_ok());

  Graph two_inputs = *model.graph;
  two_inputs.inputs().push_back(two_inputs.inputs()[0]);
  CHECK(!make_batch_dynamic(two_inputs).is_ok());
}
