// Fused YUV preprocessing against a float64 reference written from the definitions: per source
// pixel, nearest-neighbour 4:2:0 chroma and the published limited-range matrix (BT.709 has no
// OpenCV equivalent; BT.601 is checked here too), clamped to 0..255; then bilinear resizing with
// OpenCV INTER_LINEAR's pixel-centre mapping, the letterbox, scale, offset and layout.
//
// Tolerances (pixel units): the fused path blends rows in 1/256 fixed point (<= 0.5 level at a
// full-scale edge, far less in practice) and clamps after interpolating, which differs only next
// to out-of-gamut pixels: mean <= 0.25 and p99.9 <= 3 (measured: smooth frames ~1, dog.jpg 2.8
// around its saturated highlights, where the maximum reaches ~27).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>

#include "pipeline/preprocess/yuv_preprocessor.h"
#include "tests/preprocess/tensor_comparison.h"
#include "tests/preprocess/yuv_test_frame.h"
#include "tests/support/assets.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

constexpr double kMeanTolerance = 0.25;
constexpr double kP999Tolerance = 3.0;

// R = a (Y - 16) + rv (V - 128); G = a (Y - 16) + gu (U - 128) + gv (V - 128); B = a (Y - 16) + bu (U - 128)
struct Matrix {
  double a, rv, gu, gv, bu;
};
constexpr Matrix kBt601 = {1.164383, 1.596027, -0.391762, -0.812968, 2.017232};
constexpr Matrix kBt709 = {1.164383, 1.792741, -0.213249, -0.532909, 2.112402};

// Full-resolution RGB (double, clamped), channel-major: rgb[c][y * width + x].
std::vector<std::vector<double>> to_rgb(const YuvImage& im, const Matrix& m) {
  std::vector<std::vector<double>> rgb(3, std::vector<double>(static_cast<size_t>(im.width) * im.height));
  for (int y = 0; y < im.height; ++y) {
    for (int x = 0; x < im.width; ++x) {
      const double luma = im.y[y * im.y_stride + x] - 16.0;
      double u = 0;
      double v = 0;
      if (im.format == PixelFormat::kNV12) {
        u = im.u[(y / 2) * im.u_stride + 2 * (x / 2)] - 128.0;
        v = im.u[(y / 2) * im.u_stride + 2 * (x / 2) + 1] - 128.0;
      } else {
        u = im.u[(y / 2) * im.u_stride + x / 2] - 128.0;
        v = im.v[(y / 2) * im.v_stride + x / 2] - 128.0;
      }
      const double values[3] = {m.a * luma + m.rv * v, m.a * luma + m.gu * u + m.gv * v, m.a * luma + m.bu * u};
      for (int c = 0; c < 3; ++c) rgb[c][static_cast<size_t>(y) * im.width + x] = std::clamp(values[c], 0.0, 255.0);
    }
  }
  return rgb;
}

// OpenCV INTER_LINEAR source position of destination index d: (left index, weight of the right one).
std::pair<int, double> source_tap(int d, int src, int dst) {
  const double s = (d + 0.5) * src / dst - 0.5;
  int i = static_cast<int>(std::floor(s));
  double w = s - i;
  if (i < 0) return {0, 0.0};
  if (i >= src - 1) return {src - 1, 0.0};
  return {i, w};
}

std::vector<float> reference_input(const YuvImage& im, const ModelInputSpec& spec, const Matrix& m) {
  const Letterbox lb = compute_letterbox(im.width, im.height, spec.width, spec.height, spec.centre);
  const auto rgb = to_rgb(im, m);
  std::vector<float> out(static_cast<size_t>(spec.width) * spec.height * 3,
                         static_cast<float>(spec.pad_pixel * spec.scale + spec.offset));
  for (int dy = 0; dy < lb.resized_h; ++dy) {
    const auto [y0, wy] = source_tap(dy, im.height, lb.resized_h);
    const int y1 = std::min(y0 + 1, im.height - 1);
    for (int dx = 0; dx < lb.resized_w; ++dx) {
      const auto [x0, wx] = source_tap(dx, im.width, lb.resized_w);
      const int x1 = std::min(x0 + 1, im.width - 1);
      for (int c = 0; c < 3; ++c) {
        auto at = [&](int x, int y) { return rgb[c][static_cast<size_t>(y) * im.width + x]; };
        const double top = at(x0, y0) * (1 - wx) + at(x1, y0) * wx;
        const double bottom = at(x0, y1) * (1 - wx) + at(x1, y1) * wx;
        const double pixel = top * (1 - wy) + bottom * wy;
        const int channel = spec.channels == ChannelOrder::kRGB ? c : 2 - c;
        const int x = dx + lb.pad_x;
        const int y = dy + lb.pad_y;
        const size_t index = spec.layout == TensorLayout::kNCHW
                                 ? (static_cast<size_t>(channel) * spec.height + y) * spec.width + x
                                 : (static_cast<size_t>(y) * spec.width + x) * 3 + channel;
        out[index] = static_cast<float>(pixel * spec.scale + spec.offset);
      }
    }
  }
  return out;
}

void check_against_float64(const cv::Mat& bgr, YuvMatrix matrix, const Matrix& coefficients) {
  const ModelInputSpec specs[] = {yolox_input_spec(416, 416), ultralytics_input_spec(416, 320),
                                  blazeface_input_spec(128), blazeface_input_spec(256)};
  for (const ModelInputSpec& spec : specs) {
    for (PixelFormat format : {PixelFormat::kI420, PixelFormat::kNV12}) {
      CAPTURE(spec.width);
      const std::string format_name = pixel_format_name(format);
      CAPTURE(format_name);
      CAPTURE(bgr.cols);
      CAPTURE(bgr.rows);
      const YuvTestFrame frame(bgr, format, /*row_padding=*/10);
      std::vector<float> fused(static_cast<size_t>(spec.width) * spec.height * 3);
      Result<Letterbox> lb = preprocess_yuv(frame.view(), spec, matrix, fused.data());
      REQUIRE(lb.is_ok());
      const std::vector<float> expected = reference_input(frame.view(), spec, coefficients);
      const InputDifference d =
          compare_inputs(fused.data(), expected.data(), spec, *lb, spec.pad_pixel * spec.scale + spec.offset);
      INFO(d.to_string());
      CHECK(d.padding_mismatches == 0);
      CHECK(d.mean_abs <= kMeanTolerance);
      CHECK(d.percentile_999 <= kP999Tolerance);
    }
  }
}

}  // namespace

TEST_CASE("BT.709 matches the float64 reference on dog.jpg and on random smooth frames") {
  std::mt19937 rng(3);
  check_against_float64(random_smooth_bgr(1280, 720, rng), YuvMatrix::kBt709, kBt709);
  check_against_float64(random_smooth_bgr(480, 640, rng), YuvMatrix::kBt709, kBt709);
  check_against_float64(random_smooth_bgr(2, 2, rng), YuvMatrix::kBt709, kBt709);
  ASSET_OR_SKIP(path, "data/images/dog.jpg");
  cv::Mat image = cv::imread(path.string(), cv::IMREAD_COLOR);
  REQUIRE(!image.empty());
  check_against_float64(image(cv::Rect(0, 0, image.cols & ~1, image.rows & ~1)).clone(), YuvMatrix::kBt709, kBt709);
}

TEST_CASE("BT.601 matches the float64 reference (the exact formula, not OpenCV's rounded one)") {
  std::mt19937 rng(4);
  check_against_float64(random_smooth_bgr(1920, 1080, rng), YuvMatrix::kBt601, kBt601);
  check_against_float64(random_smooth_bgr(640, 480, rng), YuvMatrix::kBt601, kBt601);
}
