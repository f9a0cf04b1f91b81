// Resize: ONNX's documented examples, errors, and randomized comparisons of every mode and
// coordinate transform against a float64 per-pixel formula written out here.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>

#include "runtime/ops/ops.h"
#include "tests/ops/naive_index.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

struct ResizeCase {
  std::string mode = "nearest";
  std::string transform = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation = 0.0f;
  std::optional<std::vector<float>> scales;
  std::optional<std::vector<int64_t>> sizes;
  std::vector<float> roi;
};

Node resize_node(const ResizeCase& c) {
  Node node = make_node(OpKind::kResize, 4);
  node.attrs.set("mode", c.mode);
  node.attrs.set("coordinate_transformation_mode", c.transform);
  node.attrs.set("nearest_mode", c.nearest_mode);
  node.attrs.set("cubic_coeff_a", c.cubic_a);
  node.attrs.set("exclude_outside", int64_t{c.exclude_outside ? 1 : 0});
  node.attrs.set("extrapolation_value", c.extrapolation);
  return node;
}

Result<Tensor> run_resize(const Tensor& x, const ResizeCase& c, ThreadPool* pool = nullptr) {
  const Tensor roi = Tensor::from_vector<float>({static_cast<int64_t>(c.roi.size())}, c.roi);
  const Tensor scales = c.scales ? Tensor::from_vector<float>({static_cast<int64_t>(c.scales->size())}, *c.scales)
                                 : Tensor::empty(DType::kF32, {0});
  const Tensor sizes = c.sizes ? Tensor::from_vector<int64_t>({static_cast<int64_t>(c.sizes->size())}, *c.sizes)
                               : Tensor::empty(DType::kI64, {0});
  // Omitted inputs alternate between nullptr and empty tensors; both mean "absent".
  const Tensor* scales_input = c.scales ? &scales : (c.roi.empty() ? nullptr : &scales);
  EF_ASSIGN_OR_RETURN(
      auto outputs, run_op(resize_node(c),
                           {&x, c.roi.empty() ? nullptr : &roi, scales_input, c.sizes ? &sizes : nullptr}, true, pool));
  return outputs[0];
}

std::vector<float> values_of(const Tensor& t) {
  return {t.values<float>().begin(), t.values<float>().end()};
}

// ---- the float64 oracle -----------------------------------------------------------------------

// `out` is the resized length: in * scale unfloored when scales are given (as the ONNX reference
// computes it), else the requested size.
double source_coordinate(const ResizeCase& c, int64_t o, double scale, int64_t in, double out, size_t axis,
                         size_t rank) {
  const double x = static_cast<double>(o);
  const std::string& t = c.transform;
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (t == "asymmetric") return x / scale;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (t == "align_corners") return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out - 1);
  REQUIRE(t == "tf_crop_and_resize");
  const double start = c.roi[axis];
  const double end = c.roi[axis + rank];
  if (out == 1) return 0.5 * (start + end) * static_cast<double>(in - 1);
  return start * static_cast<double>(in - 1) + x * (end - start) * static_cast<double>(in - 1) / (out - 1);
}

// Keys' cubic convolution kernel with parameter a.
double cubic_kernel(double d, double a) {
  d = std::abs(d);
  if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
  return 0.0;
}

// (index, weight) pairs sampling coordinate x of an axis of length n; empty when outside the crop.
std::vector<std::pair<int64_t, double>> oracle_taps(const ResizeCase& c, double x, int64_t n) {
  if (c.transform == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(n - 1))) return {};
  const auto clamp = [n](int64_t i) { return std::min<int64_t>(std::max<int64_t>(i, 0), n - 1); };
  const double lower = std::floor(x);
  if (c.mode == "nearest") {
    double picked = 0;
    const double frac = x - lower;
    if (c.nearest_mode == "floor") picked = lower;
    if (c.nearest_mode == "ceil") picked = std::ceil(x);
    if (c.nearest_mode == "round_prefer_floor") picked = frac == 0.5 ? lower : std::round(x);
    if (c.nearest_mode == "round_prefer_ceil") picked = frac == 0.5 ? lower + 1 : std::round(x);
    return {{clamp(static_cast<int64_t>(picked)), 1.0}};
  }
  if (c.mode == "linear") {
    return {{clamp(static_cast<int64_t>(lower)), 1.0 - (x - lower)},
            {clamp(static_cast<int64_t>(lower) + 1), x - lower}};
  }
  std::vector<std::pair<int64_t, double>> taps;
  double total = 0;
  for (int64_t i = static_cast<int64_t>(lower) - 1; i <= static_cast<int64_t>(lower) + 2; ++i) {
    const double w =
        (c.exclude_outside && (i < 0 || i >= n)) ? 0.0 : cubic_kernel(x - static_cast<double>(i), c.cubic_a);
    taps.push_back({clamp(i), w});
    total += w;
  }
  if (c.exclude_outside) {
    for (auto& tap : taps) tap.second /= total;
  }
  return taps;
}

Tensor oracle_resize(const Tensor& x, const ResizeCase& c) {
  const Shape& in = x.shape();
  const size_t rank = in.size();
  Shape out(rank);
  std::vector<double> scales(rank);
  std::vector<double> resized(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (c.scales) {
      scales[d] = (*c.scales)[d];
      resized[d] = static_cast<double>(in[d]) * scales[d];
      out[d] = static_cast<int64_t>(std::floor(resized[d]));
    } else {
      out[d] = (*c.sizes)[d];
      resized[d] = static_cast<double>(out[d]);
      scales[d] = static_cast<double>(out[d]) / static_cast<double>(in[d]);
    }
  }
  Tensor result = Tensor::empty(DType::kF64, out);
  for (int64_t flat = 0; flat < result.numel(); ++flat) {
    const std::vector<int64_t> index = unravel(flat, out);
    // Sum over every combination of the per-axis taps.
    std::vector<std::pair<std::vector<int64_t>, double>> terms = {{{}, 1.0}};
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) {
      const auto taps = oracle_taps(c, source_coordinate(c, index[d], scales[d], in[d], resized[d], d, rank), in[d]);
      outside = outside || taps.empty();
      std::vector<std::pair<std::vector<int64_t>, double>> next;
      for (const auto& [source, weight] : terms) {
        for (const auto& [i, w] : taps) {
          next.push_back({source, weight * w});
          next.back().first.push_back(i);
        }
      }
      terms.swap(next);
    }
    double sum = 0;
    for (const auto& [source, weight] : terms) sum += weight * x.double_at(ravel(source, in));
    result.data<double>()[flat] = outside ? c.extrapolation : sum;
  }
  return result;
}

void check_against_oracle(const Tensor& x, const ResizeCase& c, double tolerance, ThreadPool* pool = nullptr) {
  auto out = run_resize(x, c, pool);
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  const Tensor expected = oracle_resize(x, c);
  REQUIRE(out->shape() == expected.shape());
  const ErrorStats error = compare_tensors(*out, expected);
  CHECK_MESSAGE(error.max_abs <= tolerance, c.mode, " ", c.transform, " ", c.nearest_mode, " on ",
                shape_to_string(x.shape()), " to ", shape_to_string(expected.shape()), ": ", error.to_string());
}

const char* const kTransforms[] = {"half_pixel",         "asymmetric",           "align_corners",
                                   "pytorch_half_pixel", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
const char* const kNearestModes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

}  // namespace

TEST_CASE("resize: ONNX documented examples") {
  const Tensor x22 = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  ResizeCase c;
  c.scales = std::vector<float>{1, 1, 2, 3};
  auto out = run_resize(x22, c);
  REQUIRE(out.is_ok());
  CHECK(out->shape() == Shape{1, 1, 4, 6});
  CHECK(values_of(*out) == std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});

  c = ResizeCase{};
  c.mode = "linear";
  c.scales = std::vector<float>{1, 1, 2, 2};
  out = run_resize(x22, c);
  REQUIRE(out.is_ok());
  CHECK(values_of(*out) ==
        std::vector<float>{1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4});

  const Tensor x24 = Tensor::from_vector<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  c = ResizeCase{};
  c.scales = std::vector<float>{1, 1, 0.6f, 0.6f};
  out = run_resize(x24, c);
  REQUIRE(out.is_ok());
  CHECK(values_of(*out) == std::vector<float>{1, 3});
  c.mode = "linear";
  out = run_resize(x24, c);
  REQUIRE(out.is_ok());
  CHECK(out->values<float>()[0] == doctest::Approx(2.6666665));
  CHECK(out->values<float>()[1] == doctest::Approx(4.3333331));
  // align_corners divides by the unfloored resized length 4 * 0.6 = 2.4: x = 1 * 3 / 1.4.
  c.transform = "align_corners";
  out = run_resize(x24, c);
  REQUIRE(out.is_ok());
  CHECK(out->values<float>()[0] == 1.0f);
  CHECK(out->values<float>()[1] == doctest::Approx(1 + 3 / 1.4));

  Tensor x44 = Tensor::empty(DType::kF32, {1, 1, 4, 4});
  for (int i = 0; i < 16; ++i) x44.data<float>()[i] = static_cast<float>(i + 1);
  c = ResizeCase{};
  c.mode = "cubic";
  c.scales = std::vector<float>{1, 1, 2, 2};
  out = run_resize(x44, c);
  REQUIRE(out.is_ok());
  const float first_row[] = {0.47265625f, 0.76953125f, 1.24609375f, 1.875f,
                             2.28125f,    2.91015625f, 3.38671875f, 3.68359375f};
  for (int i = 0; i < 8; ++i) CHECK(out->values<float>()[static_cast<size_t>(i)] == doctest::Approx(first_row[i]));

  c = ResizeCase{};
  c.mode = "linear";
  c.transform = "tf_crop_and_resize";
  c.roi = {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f};
  c.sizes = std::vector<int64_t>{1, 1, 3, 3};
  out = run_resize(x44, c);
  REQUIRE(out.is_ok());
  // Hand-computed: rows sample y = 1.2, 1.5, 1.8 and columns x = 1.8, 2.1, 2.4 of the plane 1 + 4y + x.
  const float crop[] = {7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10.0f, 10.3f, 10.6f};
  for (int i = 0; i < 9; ++i) CHECK(out->values<float>()[static_cast<size_t>(i)] == doctest::Approx(crop[i]));
  c.roi = {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f};
  c.extrapolation = 10;
  out = run_resize(x44, c);
  REQUIRE(out.is_ok());
  const float extrapolated[] = {7.6f, 10, 10, 12.4f, 10, 10, 10, 10, 10};
  for (int i = 0; i < 9; ++i) CHECK(out->values<float>()[static_cast<size_t>(i)] == doctest::Approx(extrapolated[i]));
}

TEST_CASE("resize: errors") {
  const Tensor x = Tensor::zeros(DType::kF32, {1, 1, 2, 2});
  ResizeCase c;
  CHECK(run_resize(x, c).status().code() == StatusCode::kInvalidArgument);  // neither scales nor sizes
  c.scales = std::vector<float>{1, 1, 2, 2};
  c.sizes = std::vector<int64_t>{1, 1, 4, 4};
  CHECK(run_resize(x, c).status().code() == StatusCode::kInvalidArgument);  // both
  c.sizes.reset();
  c.scales = std::vector<float>{1, 2, 2};
  CHECK(run_resize(x, c).status().code() == StatusCode::kInvalidArgument);
  c.scales = std::vector<float>{1, 1, 0, 2};
  CHECK(run_resize(x, c).status().code() == StatusCode::kInvalidArgument);
  c.scales = std::vector<float>{1, 1, 1e30f, 2};
  CHECK(run_resize(x, c).status().code() == StatusCode::kInvalidArgument);
  c.scales.reset();
  c.sizes = std::vector<int64_t>{1, 1, -4, 4};
  CHECK(run_resize(x, c).status().code() == StatusCode::kInvalidArgument);
  c.sizes = std::vector<int64_t>{1, 1, 4, 4};
  c.mode = "bicubic";
  CHECK(run_resize(x, c).status().code() == StatusCode::kUnsupported);
  c.mode = "linear";
  c.transform = "tf_crop_and_resize";  // without roi
  CHECK(run_resize(x, c).status().code() == StatusCode::kInvalidArgument);

  const Tensor meta_scales = Tensor::meta(DType::kF32, {4});
  const Status status = run_op(resize_node(ResizeCase{}), {&x, nullptr, &meta_scales}, true).status();
  CHECK(status.code() == StatusCode::kUnsupported);
  CHECK(status.message().find("scales must be a constant") != std::string::npos);
  const Tensor meta_sizes = Tensor::meta(DType::kI64, {4});
  CHECK(run_op(resize_node(ResizeCase{}), {&x, nullptr, nullptr, &meta_sizes}, true).status().code() ==
        StatusCode::kUnsupported);
}

TEST_CASE("resize: nearest, every transform and rounding, matches the float64 formula") {
  std::mt19937 rng(1);
  const Tensor x = random_tensor(DType::kF32, {2, 3, 5, 7}, rng);
  const std::vector<std::vector<float>> scale_sets = {
      {1, 1, 2, 2}, {1, 1, 3, 2}, {1, 1, 0.6f, 1.7f}, {2, 1, 1.5f, 0.5f}};
  for (const char* transform : kTransforms) {
    for (const char* rounding : kNearestModes) {
      for (const auto& scales : scale_sets) {
        ResizeCase c;
        c.transform = transform;
        c.nearest_mode = rounding;
        c.scales = scales;
        c.extrapolation = 3.5f;
        if (c.transform == "tf_crop_and_resize") c.roi = {0, 0, -0.1f, 0.2f, 1, 1, 0.9f, 1.3f};
        check_against_oracle(x, c, 0.0);
      }
      ResizeCase by_size;
      by_size.transform = transform;
      by_size.nearest_mode = rounding;
      by_size.sizes = std::vector<int64_t>{2, 3, 1, 11};
      if (by_size.transform == "tf_crop_and_resize") by_size.roi = {0, 0, 0.3f, 0.1f, 1, 1, 0.7f, 0.8f};
      check_against_oracle(x, by_size, 0.0);
    }
  }
}

TEST_CASE("resize: linear and cubic, every transform, match the float64 formula") {
  std::mt19937 rng(2);
  const Tensor x = random_tensor(DType::kF32, {1, 2, 6, 5}, rng);
  const Tensor x3 = random_tensor(DType::kF32, {3, 4, 5}, rng);
  for (const char* mode : {"linear", "cubic"}) {
    for (const char* transform : kTransforms) {
      for (bool exclude_outside : {false, true}) {
        ResizeCase c;
        c.mode = mode;
        c.transform = transform;
        c.exclude_outside = exclude_outside;
        c.cubic_a = exclude_outside ? -0.5f : -0.75f;
        c.extrapolation = -2.0f;
        if (c.transform == "tf_crop_and_resize") c.roi = {0, 0, 0.1f, -0.2f, 1, 1, 0.8f, 1.1f};
        c.scales = std::vector<float>{1, 1, 2, 2};
        check_against_oracle(x, c, 1e-5);
        c.scales = std::vector<float>{1, 1, 0.7f, 1.9f};
        check_against_oracle(x, c, 1e-5);
        c.scales.reset();
        c.sizes = std::vector<int64_t>{1, 2, 1, 9};
        check_against_oracle(x, c, 1e-5);
        // Three resized axes of a 3-D tensor.
        if (c.transform == "tf_crop_and_resize") c.roi = {0.1f, 0, 0.2f, 0.9f, 1, 0.7f};
        c.sizes = std::vector<int64_t>{5, 3, 8};
        check_against_oracle(x3, c, 1e-5);
      }
    }
  }
}

TEST_CASE("resize: integer-factor nearest upsample (the fast path) on every dtype, with threads") {
  std::mt19937 rng(4);
  ThreadPool pool(2);
  for (DType dtype : {DType::kU8, DType::kF16, DType::kI64, DType::kF32, DType::kBool}) {
    const Tensor x = random_tensor(dtype, {1, 3, 4, 5}, rng, 0, 100);
    for (const char* transform : {"asymmetric", "half_pixel"}) {
      ResizeCase c;
      c.transform = transform;
      c.nearest_mode = std::string(transform) == "asymmetric" ? "floor" : "round_prefer_floor";
      for (const auto& scales : {std::vector<float>{1, 1, 2, 2}, std::vector<float>{1, 1, 3, 1}}) {
        c.scales = scales;
        auto out = run_resize(x, c, &pool);
        REQUIRE(out.is_ok());
        Tensor expected = Tensor::empty(dtype, out->shape());
        for (int64_t flat = 0; flat < expected.numel(); ++flat) {
          std::vector<int64_t> index = unravel(flat, expected.shape());
          index[2] /= static_cast<int64_t>(scales[2]);
          index[3] /= static_cast<int64_t>(scales[3]);
          copy_element(x, ravel(index, x.shape()), expected, flat);
        }
        CHECK(identical(*out, expected));
      }
    }
  }
}

TEST_CASE("resize: linear on u8 rounds to nearest") {
  const Tensor x = Tensor::from_vector<uint8_t>({1, 1, 1, 2}, {0, 255});
  ResizeCase c;
  c.mode = "linear";
  c.transform = "align_corners";
  c.sizes = std::vector<int64_t>{1, 1, 1, 4};
  auto out = run_resize(x, c);
  REQUIRE(out.is_ok());
  const std::vector<uint8_t> values(out->values<uint8_t>().begin(), out->values<uint8_t>().end());
  CHECK(values == std::vector<uint8_t>{0, 85, 170, 255});
}
