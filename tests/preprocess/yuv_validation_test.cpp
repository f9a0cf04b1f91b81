// Input validation of fused YUV preprocessing, and that the output is all written (padding
// included) and the plan cache follows geometry changes.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "pipeline/preprocess/yuv_preprocessor.h"
#include "runtime/thread_pool.h"
#include "tests/preprocess/yuv_test_frame.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

std::vector<uint8_t> grey_planes(int width, int height) {
  return std::vector<uint8_t>(static_cast<size_t>(width) * height * 2, 128);
}

YuvImage i420_view(const std::vector<uint8_t>& planes, int width, int height) {
  YuvImage image;
  image.format = PixelFormat::kI420;
  image.width = width;
  image.height = height;
  image.y = planes.data();
  image.y_stride = width;
  image.u = planes.data() + static_cast<size_t>(width) * height;
  image.u_stride = width / 2;
  image.v = image.u + static_cast<size_t>(width / 2) * (height / 2);
  image.v_stride = width / 2;
  return image;
}

void check_rejected(const YuvImage& image, const ModelInputSpec& spec, float* dst, const std::string& needle) {
  Result<Letterbox> result = preprocess_yuv(image, spec, YuvMatrix::kBt601, dst);
  REQUIRE_FALSE(result.is_ok());
  CHECK(result.status().code() == StatusCode::kInvalidArgument);
  CHECK_MESSAGE(result.status().message().find(needle) != std::string::npos, result.status().message());
}

}  // namespace

TEST_CASE("preprocess_yuv rejects odd or empty sizes, null planes, short strides and bad specs") {
  const std::vector<uint8_t> planes = grey_planes(64, 48);
  const ModelInputSpec spec = yolox_input_spec(32, 32);
  std::vector<float> dst(32 * 32 * 3);
  const YuvImage good = i420_view(planes, 64, 48);
  REQUIRE(preprocess_yuv(good, spec, YuvMatrix::kBt601, dst.data()).is_ok());

  YuvImage odd = good;
  odd.width = 63;
  check_rejected(odd, spec, dst.data(), "odd");
  YuvImage empty = good;
  empty.height = 0;
  check_rejected(empty, spec, dst.data(), "not positive");
  YuvImage no_v = good;
  no_v.v = nullptr;
  check_rejected(no_v, spec, dst.data(), "V plane is null");
  YuvImage short_y = good;
  short_y.y_stride = 60;
  check_rejected(short_y, spec, dst.data(), "Y stride 60");
  YuvImage short_u = good;
  short_u.u_stride = 31;
  check_rejected(short_u, spec, dst.data(), "U stride 31");
  YuvImage nv12 = good;
  nv12.format = PixelFormat::kNV12;
  nv12.u_stride = 32;  // NV12's UV row holds width bytes
  check_rejected(nv12, spec, dst.data(), "UV stride 32");

  check_rejected(good, yolox_input_spec(0, 32), dst.data(), "model input size");
  check_rejected(good, spec, nullptr, "destination");
}

TEST_CASE("every output element is written, padding exactly the pad value; the plan follows new geometry") {
  std::mt19937 rng(9);
  YuvPreprocessor preprocessor;
  const std::pair<int, int> sizes[] = {{640, 480}, {480, 640}, {640, 480}, {1280, 720}};
  for (const ModelInputSpec& spec : {yolox_input_spec(416, 416), blazeface_input_spec(128)}) {
    for (const auto& [w, h] : sizes) {
      CAPTURE(w);
      CAPTURE(h);
      const YuvTestFrame frame(random_smooth_bgr(w, h, rng), PixelFormat::kNV12);
      std::vector<float> dst(static_cast<size_t>(spec.width) * spec.height * 3, std::nanf(""));
      Result<Letterbox> lb = preprocessor.run(frame.view(), spec, YuvMatrix::kBt709, dst.data());
      REQUIRE(lb.is_ok());
      const Letterbox expected = compute_letterbox(w, h, spec.width, spec.height, spec.centre);
      CHECK(lb->resized_w == expected.resized_w);
      CHECK(lb->resized_h == expected.resized_h);
      CHECK(lb->pad_x == expected.pad_x);
      CHECK(lb->pad_y == expected.pad_y);
      const float lo = spec.offset;
      const float hi = 255 * spec.scale + spec.offset;
      int64_t out_of_range = 0;
      for (float value : dst) {
        if (!(value >= lo && value <= hi)) ++out_of_range;  // also counts NaN: an element never written
      }
      CHECK(out_of_range == 0);
    }
  }
}

TEST_CASE("rows split across a thread pool give exactly the single-threaded tensor") {
  std::mt19937 rng(2);
  ThreadPool pool(3);
  for (PixelFormat format : {PixelFormat::kI420, PixelFormat::kNV12}) {
    const YuvTestFrame frame(random_smooth_bgr(1280, 720, rng), format, /*row_padding=*/4);
    for (const ModelInputSpec& spec : {yolox_input_spec(416, 416), blazeface_input_spec(256)}) {
      std::vector<float> single(static_cast<size_t>(spec.width) * spec.height * 3);
      std::vector<float> pooled(single.size());
      YuvPreprocessor a;
      YuvPreprocessor b;
      REQUIRE(a.run(frame.view(), spec, YuvMatrix::kBt709, single.data()).is_ok());
      REQUIRE(b.run(frame.view(), spec, YuvMatrix::kBt709, pooled.data(), &pool).is_ok());
      CHECK(single == pooled);
    }
  }
}
