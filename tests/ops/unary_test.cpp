// Pointwise unary ops: reference kernels against independent float64 formulas, the optimised
// f32 kernel against the reference, integer Relu/Clip, and Clip's bound checks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "runtime/thread_pool.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using edgefuse::test::make_node;
using edgefuse::test::run_op;

namespace {

struct UnaryCase {
  OpKind op;
  std::function<double(double)> formula;  // float64 oracle, written independently of the kernels
  bool transcendental;                    // computed with exp/tanh: compared by relative error
};

double clamp01(double v) {
  return std::min(1.0, std::max(0.0, v));
}

std::vector<UnaryCase> unary_cases() {
  return {
      {OpKind::kRelu, [](double x) { return x > 0 ? x : 0.0; }, false},
      {OpKind::kLeakyRelu, [](double x) { return x >= 0 ? x : 0.01 * x; }, false},
      {OpKind::kSigmoid, [](double x) { return 0.5 * (1.0 + std::tanh(0.5 * x)); }, true},
      {OpKind::kTanh, [](double x) { return std::tanh(x); }, true},
      {OpKind::kHardSigmoid, [](double x) { return clamp01(0.2 * x + 0.5); }, false},
      {OpKind::kHardSwish, [](double x) { return x * clamp01(x / 6.0 + 0.5); }, false},
      {OpKind::kClip, [](double x) { return x; }, false},  // no bounds: the f32 range, finite inputs unchanged
      {OpKind::kSqrt, [](double x) { return std::sqrt(x); }, false},
      {OpKind::kExp, [](double x) { return std::exp(x); }, true},
  };
}

std::vector<float> value_grid() {
  std::vector<float> values = {-1e4f, -100.0f, -88.0f, -20.0f, -5.5f, -3.0f, -1.0f, -0.5f, -1e-3f, -0.0f,
                               0.0f,  1e-3f,   0.5f,   1.0f,   3.0f,  5.5f,  20.0f, 88.0f, 100.0f, 1e4f};
  for (int i = -40; i <= 40; ++i) values.push_back(static_cast<float>(i) * 0.25f);
  return values;
}

// |actual - expected| <= tolerance * |expected| + floor, with the float64 expectation rounded to
// f32 first (so overflow to inf and underflow to subnormals count as exact). NaN must match NaN.
// Transcendental ops: relative error 1e-6, with an absolute floor for f32 subnormal results
// (sigmoid(-100)). Others: relative 1e-6 plus absolute 1e-7 (HardSigmoid's f32 alpha * x + beta
// rounds by ~3e-8 near its kink).
void check_against_formula(const Tensor& actual, const std::vector<float>& inputs, const UnaryCase& c) {
  const double floor = c.transcendental ? 1e-37 : 1e-7;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const double expected = static_cast<float>(c.formula(inputs[i]));
    const double got = actual.double_at(static_cast<int64_t>(i));
    INFO(op_name(c.op), "(", inputs[i], ") = ", got, ", expected ", expected);
    if (std::isnan(expected) || std::isinf(expected)) {
      CHECK((std::isnan(expected) ? std::isnan(got) : got == expected));
    } else {
      CHECK(std::abs(got - expected) <= 1e-6 * std::abs(expected) + floor);
    }
  }
}

double max_relative_error(const Tensor& actual, const Tensor& expected) {
  double worst = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double a = actual.double_at(i);
    const double e = expected.double_at(i);
    if (a == e) continue;
    worst = std::max(worst, std::abs(a - e) / std::max(std::abs(e), 1e-30));
  }
  return worst;
}

Tensor run_one(const Node& node, const std::vector<const Tensor*>& inputs, bool reference, ThreadPool* pool = nullptr) {
  auto result = run_op(node, inputs, reference, pool);
  REQUIRE_MESSAGE(result.is_ok(), result.status().to_string());
  return std::move(result.value()[0]);
}

}  // namespace

TEST_CASE("unary reference and f32 kernels match float64 formulas on a grid including large magnitudes") {
  const std::vector<float> grid = value_grid();
  const Tensor x = Tensor::from_vector<float>({static_cast<int64_t>(grid.size())}, grid);
  for (const UnaryCase& c : unary_cases()) {
    const Node node = make_node(c.op, 1);
    for (bool reference : {true, false}) {
      INFO((reference ? "reference" : "cpu"));
      check_against_formula(run_one(node, {&x}, reference), grid, c);
    }
  }
}

TEST_CASE("unary ops on f64 and f16 go through the reference") {
  std::mt19937 rng(7);
  for (const UnaryCase& c : unary_cases()) {
    const Node node = make_node(c.op, 1);
    const Tensor x64 = test::random_tensor(DType::kF64, {5, 7}, rng, -6, 6);
    const Tensor y64 = run_one(node, {&x64}, false);
    // LeakyRelu's and HardSigmoid's alpha are f32 attributes, 0.01f and 0.2f, not 0.01 and 0.2.
    const bool f32_attribute = c.op == OpKind::kLeakyRelu || c.op == OpKind::kHardSigmoid;
    const double epsilon = f32_attribute ? 1e-7 : 1e-12;
    for (int64_t i = 0; i < x64.numel(); ++i) {
      const double expected = c.formula(x64.double_at(i));
      INFO(op_name(c.op), "(", x64.double_at(i), ")");
      if (std::isnan(expected)) {
        CHECK(std::isnan(y64.double_at(i)));
      } else {
        CHECK(y64.double_at(i) == doctest::Approx(expected).epsilon(epsilon));
      }
    }
    const Tensor x16 = test::random_tensor(DType::kF16, {9}, rng, 0, 4);
    const Tensor y16 = run_one(node, {&x16}, false);
    REQUIRE(y16.dtype() == DType::kF16);
    for (int64_t i = 0; i < x16.numel(); ++i) {
      INFO(op_name(c.op), "(", x16.double_at(i), ")");
      CHECK(y16.double_at(i) == doctest::Approx(c.formula(x16.double_at(i))).epsilon(1e-3));
    }
  }
}

TEST_CASE("unary f32 kernel equals the reference on awkward sizes with 1 and 2 threads") {
  std::mt19937 rng(1234);
  ThreadPool one(1);
  ThreadPool two(2);
  for (int64_t size : {1, 7, 13, 127, 1000, 40000}) {
    const Tensor x = test::random_tensor(DType::kF32, {size}, rng, -8, 8);
    for (const UnaryCase& c : unary_cases()) {
      Node node = make_node(c.op, 1);
      if (c.op == OpKind::kLeakyRelu) node.attrs.set("alpha", 0.3f);
      const Tensor expected = run_one(node, {&x}, true);
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &one, &two}) {
        INFO(op_name(c.op), " size ", size, " threads ", pool ? pool->size() : 0);
        const Tensor actual = run_one(node, {&x}, false, pool);
        const test::ErrorStats stats = test::compare_tensors(actual, expected);
        CHECK(stats.mismatched_nan == 0);
        CHECK(stats.relative_l2 <= 1e-6);
        if (c.transcendental) {
          CHECK(max_relative_error(actual, expected) <= 1e-6);
        } else {
          CHECK(stats.max_abs <= 1e-6);
        }
      }
    }
  }
}

TEST_CASE("LeakyRelu and HardSigmoid read their attributes") {
  const Tensor x = Tensor::from_vector<float>({4}, {-2.0f, -0.5f, 0.5f, 4.0f});
  Node leaky = make_node(OpKind::kLeakyRelu, 1);
  leaky.attrs.set("alpha", 0.5f);
  Node hard = make_node(OpKind::kHardSigmoid, 1);
  hard.attrs.set("alpha", 0.25f);
  hard.attrs.set("beta", 0.25f);
  for (bool reference : {true, false}) {
    const Tensor y = run_one(leaky, {&x}, reference);
    CHECK(y.data<float>()[0] == -1.0f);
    CHECK(y.data<float>()[1] == -0.25f);
    CHECK(y.data<float>()[3] == 4.0f);
    const Tensor h = run_one(hard, {&x}, reference);
    CHECK(h.data<float>()[0] == 0.0f);
    CHECK(h.data<float>()[2] == 0.375f);
    CHECK(h.data<float>()[3] == 1.0f);
  }
}

TEST_CASE("Clip with min and max inputs, omitted bounds, and min > max") {
  const Tensor x = Tensor::from_vector<float>({6}, {-5.0f, -1.0f, 0.0f, 2.0f, 7.0f, INFINITY});
  const Tensor lo = Tensor::scalar(-1.5f);
  const Tensor hi = Tensor::from_vector<float>({1}, {2.5f});
  const Node clip3 = make_node(OpKind::kClip, 3);
  for (bool reference : {true, false}) {
    INFO((reference ? "reference" : "cpu"));
    const Tensor both = run_one(clip3, {&x, &lo, &hi}, reference);
    CHECK(std::vector<float>(both.values<float>().begin(), both.values<float>().end()) ==
          std::vector<float>{-1.5f, -1.0f, 0.0f, 2.0f, 2.5f, 2.5f});
    const Tensor max_only = run_one(clip3, {&x, nullptr, &hi}, reference);
    CHECK(max_only.data<float>()[0] == -5.0f);
    CHECK(max_only.data<float>()[4] == 2.5f);
    const Tensor none = run_one(make_node(OpKind::kClip, 1), {&x}, reference);
    CHECK(none.data<float>()[5] == std::numeric_limits<float>::max());  // ONNX default max is the type's highest
    const Tensor swapped = run_one(clip3, {&x, &hi, &lo}, reference);   // min 2.5 > max -1.5: all max
    for (float v : swapped.values<float>()) CHECK(v == -1.5f);
    const Tensor nan = Tensor::from_vector<float>({1}, {NAN});
    CHECK(std::isnan(run_one(clip3, {&nan, &lo, &hi}, reference).data<float>()[0]));
    CHECK(std::isnan(run_one(make_node(OpKind::kRelu, 1), {&nan}, reference).data<float>()[0]));
  }
}

TEST_CASE("Relu and Clip on integer tensors") {
  const Tensor x8 = Tensor::from_vector<int8_t>({5}, {-128, -3, 0, 5, 127});
  const Tensor lo8 = Tensor::scalar<int8_t>(-2);
  const Tensor hi8 = Tensor::scalar<int8_t>(4);
  const Node clip = make_node(OpKind::kClip, 3);
  for (bool reference : {true, false}) {
    const Tensor clipped = run_one(clip, {&x8, &lo8, &hi8}, reference);
    CHECK(std::vector<int8_t>(clipped.values<int8_t>().begin(), clipped.values<int8_t>().end()) ==
          std::vector<int8_t>{-2, -2, 0, 4, 4});
    const Tensor unchanged = run_one(make_node(OpKind::kClip, 1), {&x8}, reference);
    CHECK(std::vector<int8_t>(unchanged.values<int8_t>().begin(), unchanged.values<int8_t>().end()) ==
          std::vector<int8_t>{-128, -3, 0, 5, 127});
    const Tensor x64 = Tensor::from_vector<int64_t>({3}, {std::numeric_limits<int64_t>::min(), -1, 9});
    const Tensor hi64 = Tensor::scalar<int64_t>(std::numeric_limits<int64_t>::max() - 1);
    const Tensor clipped64 = run_one(clip, {&x64, nullptr, &hi64}, reference);
    CHECK(clipped64.data<int64_t>()[0] == std::numeric_limits<int64_t>::min());
    const Tensor x32 = Tensor::from_vector<int32_t>({3}, {-7, 0, 7});
    const Tensor relu = run_one(make_node(OpKind::kRelu, 1), {&x32}, reference);
    CHECK(std::vector<int32_t>(relu.values<int32_t>().begin(), relu.values<int32_t>().end()) ==
          std::vector<int32_t>{0, 0, 7});
  }
}

TEST_CASE("unary shape rule and dtype errors") {
  const Tensor x = Tensor::meta(DType::kF32, {2, 3});
  std::vector<TensorDesc> outputs;
  REQUIRE(infer_node(make_node(OpKind::kSigmoid, 1), std::vector<const Tensor*>{&x}, outputs).is_ok());
  CHECK(outputs == std::vector<TensorDesc>{x.desc()});

  const Node clip = make_node(OpKind::kClip, 3);
  const Tensor wrong_dtype = Tensor::scalar(1.0);
  const Status dtype_error = infer_node(clip, std::vector<const Tensor*>{&x, &wrong_dtype, nullptr}, outputs);
  CHECK(dtype_error.code() == StatusCode::kInvalidModel);
  CHECK(dtype_error.message().find("min is f64") != std::string::npos);
  const Tensor not_scalar = Tensor::meta(DType::kF32, {2});
  const Status shape_error = infer_node(clip, std::vector<const Tensor*>{&x, nullptr, &not_scalar}, outputs);
  CHECK(shape_error.code() == StatusCode::kInvalidModel);
  CHECK(shape_error.message().find("max must be a scalar") != std::string::npos);

  const Tensor ints = Tensor::from_vector<int32_t>({2}, {1, 2});
  for (bool reference : {true, false}) {
    auto result = run_op(make_node(OpKind::kSigmoid, 1), {&ints}, reference);
    REQUIRE_FALSE(result.is_ok());
    CHECK(result.status().code() == StatusCode::kUnsupported);
  }
}
