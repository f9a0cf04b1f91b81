// Whole models against OpenCV DNN 4.6 on real photos: both runtimes get the same input tensor
// (our letterbox preprocessing), and every output must agree to float32 accuracy.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/detector/preprocess.h"
#include "runtime/executor.h"
#include "tests/models/model_fixtures.h"
#include "tests/support/assets.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

constexpr double kMaxRelativeL2 = 1e-5;
// Max abs error: 1e-3, or 1e-6 of the output's peak magnitude where that is larger (about 8 float
// ulps at the peak). BlazeFace's score logits reach 1e4, where one ulp is already 2e-3.
constexpr double kMaxAbs = 1e-3;
constexpr double kMaxAbsOfPeak = 1e-6;

double peak_magnitude(const Tensor& tensor) {
  double peak = 0;
  for (int64_t i = 0; i < tensor.numel(); ++i) peak = std::max(peak, std::abs(tensor.double_at(i)));
  return peak;
}

// Runs our executor (optimised and reference kernels) and OpenCV DNN on `input`; compares outputs.
void compare_with_opencv(LoadedModel& model, const Tensor& input) {
  REQUIRE_MESSAGE(model.graph != nullptr, "import failed: " << model.import_error);
  REQUIRE_MESSAGE(!model.opencv.empty(), "OpenCV DNN could not read the model: " << model.opencv_error);
  const std::vector<Tensor> expected = run_opencv(model, input);
  REQUIRE(expected.size() == model.graph->outputs().size());

  for (bool reference_kernels : {false, true}) {
    CAPTURE(reference_kernels);
    Result<Executor> executor = Executor::create(model.graph, ExecutorOptions{.reference_kernels = reference_kernels});
    REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
    Result<std::vector<Tensor>> actual = executor->run(std::span<const Tensor>(&input, 1));
    REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
    REQUIRE(actual->size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      const std::string& name = model.graph->value(model.graph->outputs()[i]).name;
      CAPTURE(name);
      REQUIRE((*actual)[i].shape() == expected[i].shape());
      const ErrorStats error = compare_tensors((*actual)[i], expected[i]);
      const double peak = peak_magnitude(expected[i]);
      MESSAGE(name << (reference_kernels ? " (reference kernels)" : " (optimised kernels)") << ": " << error.to_string()
                   << ", peak |value| " << peak);
      CHECK(error.relative_l2 <= kMaxRelativeL2);
      CHECK(error.max_abs <= std::max(kMaxAbs, kMaxAbsOfPeak * peak));
      CHECK(error.mismatched_nan == 0);
    }
  }
}

}  // namespace

TEST_CASE("YOLOX-nano matches OpenCV DNN on dog.jpg") {
  ASSET_OR_SKIP(model_path, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(image_path, "data/images/dog.jpg");
  const cv::Mat image = read_image(image_path);
  REQUIRE(!image.empty());
  Result<PreprocessedImage> input = preprocess_yolox(image, 416, 416);
  REQUIRE(input.is_ok());
  compare_with_opencv(load_model(model_path), input->input);
}

TEST_CASE("BlazeFace front-128 matches OpenCV DNN on person.jpg") {
  ASSET_OR_SKIP(model_path, "models/blazeface_front_128.onnx");
  ASSET_OR_SKIP(image_path, "data/images/person.jpg");
  const cv::Mat image = read_image(image_path);
  REQUIRE(!image.empty());
  Result<PreprocessedImage> input = preprocess_blazeface(image, 128);
  REQUIRE(input.is_ok());
  compare_with_opencv(load_model(model_path), input->input);
}

TEST_CASE("BlazeFace back-256 matches OpenCV DNN on person.jpg") {
  ASSET_OR_SKIP(model_path, "models/blazeface_back_256.onnx");
  ASSET_OR_SKIP(image_path, "data/images/person.jpg");
  const cv::Mat image = read_image(image_path);
  REQUIRE(!image.empty());
  Result<PreprocessedImage> input = preprocess_blazeface(image, 256);
  REQUIRE(input.is_ok());
  compare_with_opencv(load_model(model_path), input->input);
}
