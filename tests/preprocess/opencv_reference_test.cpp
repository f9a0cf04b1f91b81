// Fused YUV preprocessing against the OpenCV chain it replaces: cv::cvtColor to BGR at full
// resolution (BT.601, what OpenCV implements), then preprocess_image (cv::resize).
//
// Tolerances, in pixel units (0..255): OpenCV rounds to 8 bits twice (after the colour conversion
// and after the resize) and clamps before resizing; the fused path interpolates first, clamps
// last and keeps fractions. On in-gamut content that leaves a mean |difference| well under 1 and
// a 99.9th percentile within a few levels (kMeanTolerance, kP999Tolerance). Uniform noise is the
// worst case (4:2:0 subsampling then makes most pixels out of gamut, so clamping order matters at
// every edge): there the tolerances are looser (kNoise*). A swapped channel order, the other
// colour matrix or a one-pixel letterbox shift exceed the tight tolerances, as the
// "tolerances catch" case shows on the real image.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "models/detector/preprocess.h"
#include "pipeline/preprocess/yuv_preprocessor.h"
#include "tests/preprocess/tensor_comparison.h"
#include "tests/preprocess/yuv_test_frame.h"
#include "tests/support/assets.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

constexpr double kMeanTolerance = 1.0;
constexpr double kP999Tolerance = 4.0;
constexpr double kNoiseMeanTolerance = 3.0;   // measured ~2.5; a swapped channel order gives ~80
constexpr double kNoiseP999Tolerance = 64.0;  // measured ~53: clamp-order differences at out-of-gamut edges

struct Family {
  const char* name;
  ModelInputSpec spec;
};

std::vector<Family> families() {
  return {{"YOLOX 416", yolox_input_spec(416, 416)},
          {"YOLOX 320x256", yolox_input_spec(320, 256)},
          {"YOLOv5/v8 416x320", ultralytics_input_spec(416, 320)},
          {"BlazeFace 128", blazeface_input_spec(128)},
          {"BlazeFace 256", blazeface_input_spec(256)}};
}

PreprocessedImage opencv_reference(const cv::Mat& bgr, const Family& family) {
  Result<PreprocessedImage> out = preprocess_image(bgr, family.spec);
  REQUIRE(out.is_ok());
  return std::move(out).value();
}

struct Outcome {
  std::vector<float> fused;
  PreprocessedImage reference;
  Letterbox letterbox;
};

Outcome run_both(const YuvTestFrame& frame, const Family& family, YuvMatrix matrix = YuvMatrix::kBt601) {
  Outcome outcome;
  outcome.fused.assign(static_cast<size_t>(family.spec.width) * family.spec.height * 3, -12345.0f);
  Result<Letterbox> lb = preprocess_yuv(frame.view(), family.spec, matrix, outcome.fused.data());
  REQUIRE_MESSAGE(lb.is_ok(), lb.status().to_string());
  outcome.letterbox = *lb;
  outcome.reference = opencv_reference(frame.to_bgr(), family);
  return outcome;
}

float padding_value(const ModelInputSpec& spec) {
  return spec.pad_pixel * spec.scale + spec.offset;
}

void check_against_opencv(const cv::Mat& bgr, int row_padding, double mean_tolerance, double p999_tolerance) {
  for (const Family& family : families()) {
    for (PixelFormat format : {PixelFormat::kI420, PixelFormat::kNV12}) {
      const std::string family_name = family.name;
      CAPTURE(family_name);
      const std::string format_name = pixel_format_name(format);
      CAPTURE(format_name);
      CAPTURE(bgr.cols);
      CAPTURE(bgr.rows);
      const YuvTestFrame frame(bgr, format, row_padding);
      const Outcome o = run_both(frame, family);
      const Letterbox expected =
          compute_letterbox(bgr.cols, bgr.rows, family.spec.width, family.spec.height, family.spec.centre);
      CHECK(o.letterbox.resized_w == expected.resized_w);
      CHECK(o.letterbox.resized_h == expected.resized_h);
      CHECK(o.letterbox.pad_x == expected.pad_x);
      CHECK(o.letterbox.pad_y == expected.pad_y);
      CHECK(o.letterbox.scale == expected.scale);
      CHECK(o.letterbox.resized_w == o.reference.letterbox.resized_w);
      CHECK(o.letterbox.pad_y == o.reference.letterbox.pad_y);

      const InputDifference d = compare_inputs(o.fused.data(), o.reference.input.data<float>(), family.spec,
                                               o.letterbox, padding_value(family.spec));
      INFO(d.to_string());
      CHECK(d.padding_mismatches == 0);
      CHECK(d.mean_abs <= mean_tolerance);
      CHECK(d.percentile_999 <= p999_tolerance);
    }
  }
}

}  // namespace

TEST_CASE("fused preprocessing matches OpenCV on dog.jpg (I420 and NV12, YOLOX and BlazeFace)") {
  ASSET_OR_SKIP(path, "data/images/dog.jpg");
  cv::Mat image = cv::imread(path.string(), cv::IMREAD_COLOR);
  REQUIRE(!image.empty());
  image = image(cv::Rect(0, 0, image.cols & ~1, image.rows & ~1)).clone();  // 4:2:0 needs even sizes
  check_against_opencv(image, /*row_padding=*/0, kMeanTolerance, kP999Tolerance);
  check_against_opencv(image, /*row_padding=*/36, kMeanTolerance, kP999Tolerance);
}

TEST_CASE("fused preprocessing matches OpenCV on random smooth frames of many sizes, padded strides") {
  std::mt19937 rng(11);
  const std::pair<int, int> sizes[] = {{1920, 1080}, {640, 480}, {1280, 720}, {480, 640}, {2, 2},
                                       {416, 416},   {200, 2},   {6, 1000},   {418, 234}};
  for (const auto& [w, h] : sizes) {
    const cv::Mat bgr = random_smooth_bgr(w, h, rng);
    check_against_opencv(bgr, /*row_padding=*/w % 3 == 0 ? 0 : 64, kMeanTolerance, kP999Tolerance);
  }
}

TEST_CASE("fused preprocessing stays near OpenCV on uniform noise (out-of-gamut worst case)") {
  std::mt19937 rng(5);
  const std::pair<int, int> sizes[] = {{1920, 1080}, {480, 640}, {2, 2}, {64, 48}};
  for (const auto& [w, h] : sizes)
    check_against_opencv(random_bgr(w, h, rng), 8, kNoiseMeanTolerance, kNoiseP999Tolerance);
}

TEST_CASE("the tolerances catch a swapped channel order, the wrong matrix and a one-pixel shift") {
  ASSET_OR_SKIP(path, "data/images/dog.jpg");
  cv::Mat image = cv::imread(path.string(), cv::IMREAD_COLOR);
  REQUIRE(!image.empty());
  image = image(cv::Rect(0, 0, image.cols & ~1, image.rows & ~1)).clone();
  for (const Family& family : families()) {
    const std::string family_name = family.name;
    CAPTURE(family_name);
    const YuvTestFrame frame(image, PixelFormat::kNV12);
    const Outcome o = run_both(frame, family);
    const float* reference = o.reference.input.data<float>();
    const float pad = padding_value(family.spec);

    const InputDifference swapped = compare_inputs(o.fused.data(), reference, family.spec, o.letterbox, pad, 0, true);
    INFO("swapped: " << swapped.to_string());
    CHECK((swapped.mean_abs > kMeanTolerance && swapped.percentile_999 > kP999Tolerance));

    const InputDifference shifted = compare_inputs(o.fused.data(), reference, family.spec, o.letterbox, pad, 1);
    INFO("shifted: " << shifted.to_string());
    CHECK(shifted.percentile_999 > kP999Tolerance);

    const Outcome bt709 = run_both(frame, family, YuvMatrix::kBt709);
    const InputDifference wrong_matrix =
        compare_inputs(bt709.fused.data(), reference, family.spec, bt709.letterbox, pad);
    INFO("BT.709 vs OpenCV's BT.601: " << wrong_matrix.to_string());
    CHECK(wrong_matrix.percentile_999 > kP999Tolerance);
  }
}
