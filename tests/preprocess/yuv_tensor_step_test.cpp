// The GPU's per-pixel form of fused YUV preprocessing (yuv_tensor_step.h), run on the host: the
// same tensor as the CPU row kernels, bit for bit, for both formats, both layouts, padded strides,
// letterbox padding on either axis and source sizes whose taps reach the last column and row.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>

#include "pipeline/preprocess/yuv_preprocessor.h"
#include "tests/preprocess/yuv_test_frame.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

std::vector<float> run_step_on_host(const YuvImage& image, const ModelInputSpec& spec, YuvMatrix matrix) {
  const YuvResizePlan plan = make_yuv_resize_plan(image.format, image.width, image.height, spec);
  std::vector<float> out(static_cast<size_t>(spec.width) * spec.height * 3, -1.0f);
  const YuvTensorStep step = make_yuv_tensor_step(image, plan, spec, matrix, out.data());
  for (int64_t i = 0; i < step.count(); ++i) step.run(i);
  return out;
}

}  // namespace

TEST_CASE("the per-pixel GPU form of YUV preprocessing equals the CPU row kernels bit for bit") {
  std::mt19937 rng(17);
  struct Geometry {
    int src_w, src_h;
    ModelInputSpec spec;
  };
  const Geometry geometries[] = {
      {638, 358, yolox_input_spec(416, 416)},         // wide: padding below
      {360, 642, yolox_input_spec(416, 416)},         // tall: padding on the right
      {1920, 1080, blazeface_input_spec(128)},        // NHWC RGB, centred
      {1280, 720, ultralytics_input_spec(640, 640)},  // NCHW RGB, v / 255, centred
      {98, 66, yolox_input_spec(128, 96)},            // upscaling
      {416, 416, yolox_input_spec(416, 416)},         // identity size
  };
  for (const Geometry& g : geometries) {
    for (const PixelFormat format : {PixelFormat::kI420, PixelFormat::kNV12}) {
      for (const YuvMatrix matrix : {YuvMatrix::kBt601, YuvMatrix::kBt709}) {
        INFO(g.src_w, "x", g.src_h, " -> ", g.spec.width, "x", g.spec.height, " ", pixel_format_name(format),
             matrix == YuvMatrix::kBt601 ? " BT.601" : " BT.709");
        const YuvTestFrame frame(random_smooth_bgr(g.src_w, g.src_h, rng), format, 6);
        std::vector<float> expected(static_cast<size_t>(g.spec.width) * g.spec.height * 3);
        REQUIRE(preprocess_yuv(frame.view(), g.spec, matrix, expected.data()).is_ok());
        const std::vector<float> actual = run_step_on_host(frame.view(), g.spec, matrix);
        CHECK(std::memcmp(actual.data(), expected.data(), expected.size() * sizeof(float)) == 0);
      }
    }
  }
}
