// Concat, Split, Slice, Transpose, Gather, Pad: hand-computed cases, error cases, and randomized
// comparisons against element-by-element oracles over u8, i64 and f32.
#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <random>

#include "runtime/ops/ops.h"
#include "tests/ops/naive_index.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

const DType kDTypes[] = {DType::kU8, DType::kI64, DType::kF32};

Tensor i64s(std::vector<int64_t> values) {
  const auto n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}

Tensor f32s(Shape shape, std::vector<float> values) {
  return Tensor::from_vector<float>(std::move(shape), values);
}

std::vector<float> values_of(const Tensor& t) {
  return {t.values<float>().begin(), t.values<float>().end()};
}

Tensor run_one(const Node& node, const std::vector<const Tensor*>& inputs) {
  auto result = run_op(node, inputs, true);
  REQUIRE_MESSAGE(result.is_ok(), result.status().to_string());
  REQUIRE(result->size() == 1);
  return (*result)[0];
}

Shape random_shape(std::mt19937& rng, int rank, int64_t max_dim) {
  Shape shape(static_cast<size_t>(rank));
  for (auto& d : shape) d = std::uniform_int_distribution<int64_t>(1, max_dim)(rng);
  return shape;
}

}  // namespace

// ---- Concat -----------------------------------------------------------------------------------

TEST_CASE("concat: hand-computed on both axes, negative axis, empty input") {
  const Tensor a = f32s({2, 2}, {1, 2, 3, 4});
  const Tensor b = f32s({1, 2}, {5, 6});
  const Tensor c = f32s({2, 1}, {7, 8});
  const Tensor empty = f32s({0, 2}, {});
  Node node = make_node(OpKind::kConcat, 3);
  node.attrs.set("axis", int64_t{0});
  Tensor out = run_one(node, {&a, &empty, &b});
  CHECK(out.shape() == Shape{3, 2});
  CHECK(values_of(out) == std::vector<float>{1, 2, 3, 4, 5, 6});
  Node last = make_node(OpKind::kConcat, 2);
  last.attrs.set("axis", int64_t{-1});
  out = run_one(last, {&a, &c});
  CHECK(out.shape() == Shape{2, 3});
  CHECK(values_of(out) == std::vector<float>{1, 2, 7, 3, 4, 8});
}

TEST_CASE("concat: errors") {
  const Tensor a = f32s({2, 2}, {1, 2, 3, 4});
  const Tensor b = f32s({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor i = Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4});
  Node node = make_node(OpKind::kConcat, 2);
  CHECK(run_op(node, {&a, &a}, true).status().code() == StatusCode::kInvalidModel);  // axis is required
  node.attrs.set("axis", int64_t{0});
  CHECK(run_op(node, {&a, &b}, true).status().code() == StatusCode::kInvalidArgument);
  CHECK(run_op(node, {&a, &i}, true).status().code() == StatusCode::kInvalidArgument);
  node.attrs.set("axis", int64_t{2});
  CHECK(run_op(node, {&a, &a}, true).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("concat: random shapes and dtypes match a naive copy") {
  std::mt19937 rng(11);
  for (DType dtype : kDTypes) {
    for (int trial = 0; trial < 20; ++trial) {
      const int rank = std::uniform_int_distribution<int>(1, 4)(rng);
      const int axis = std::uniform_int_distribution<int>(0, rank - 1)(rng);
      const Shape base = random_shape(rng, rank, 4);
      std::vector<Tensor> parts;
      const int count = std::uniform_int_distribution<int>(1, 4)(rng);
      for (int p = 0; p < count; ++p) {
        Shape shape = base;
        shape[static_cast<size_t>(axis)] = std::uniform_int_distribution<int64_t>(0, 3)(rng);
        parts.push_back(random_tensor(dtype, shape, rng, 0, 200));
      }
      Node node = make_node(OpKind::kConcat, count);
      node.attrs.set("axis", int64_t{axis - (trial % 2) * rank});  // alternate negative axes
      std::vector<const Tensor*> inputs;
      for (const Tensor& t : parts) inputs.push_back(&t);
      const Tensor out = run_one(node, inputs);
      Tensor expected = Tensor::empty(dtype, out.shape());
      for (int64_t flat = 0; flat < out.numel(); ++flat) {
        std::vector<int64_t> index = unravel(flat, out.shape());
        size_t p = 0;
        while (index[static_cast<size_t>(axis)] >= parts[p].dim(axis))
          index[static_cast<size_t>(axis)] -= parts[p++].dim(axis);
        copy_element(parts[p], ravel(index, parts[p].shape()), expected, flat);
      }
      CHECK(identical(out, expected));
    }
  }
}

// ---- Split ------------------------------------------------------------------------------------

TEST_CASE("split: equal parts, split sizes, uneven num_outputs, errors") {
  const Tensor data = f32s({2, 6}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Node equal = make_node(OpKind::kSplit, 1, 3);
  equal.attrs.set("axis", int64_t{1});
  auto parts = run_op(equal, {&data}, true);
  REQUIRE(parts.is_ok());
  CHECK(values_of((*parts)[0]) == std::vector<float>{1, 2, 7, 8});
  CHECK(values_of((*parts)[2]) == std::vector<float>{5, 6, 11, 12});

  const Tensor sizes = i64s({1, 0, 5});
  Node variable = make_node(OpKind::kSplit, 2, 3);
  variable.attrs.set("axis", int64_t{-1});
  parts = run_op(variable, {&data, &sizes}, true);
  REQUIRE(parts.is_ok());
  CHECK((*parts)[0].shape() == Shape{2, 1});
  CHECK((*parts)[1].shape() == Shape{2, 0});
  CHECK(values_of((*parts)[2]) == std::vector<float>{2, 3, 4, 5, 6, 8, 9, 10, 11, 12});

  Node rows = make_node(OpKind::kSplit, 1, 2);
  parts = run_op(rows, {&data}, true);
  REQUIRE(parts.is_ok());
  CHECK(values_of((*parts)[1]) == std::vector<float>{7, 8, 9, 10, 11, 12});

  Node four = make_node(OpKind::kSplit, 1, 4);
  four.attrs.set("axis", int64_t{1});
  CHECK(run_op(four, {&data}, true).status().code() == StatusCode::kInvalidArgument);  // 6 into 4: uneven
  four.attrs.set("num_outputs", int64_t{4});  // opset 18: ceil-sized parts, smaller last
  parts = run_op(four, {&data}, true);
  REQUIRE(parts.is_ok());
  CHECK((*parts)[0].shape() == Shape{2, 2});
  CHECK((*parts)[3].shape() == Shape{2, 0});

  const Tensor bad_sum = i64s({1, 1, 1});
  CHECK(run_op(variable, {&data, &bad_sum}, true).status().code() == StatusCode::kInvalidArgument);
  const Tensor negative = i64s({7, -1, 0});
  CHECK(run_op(variable, {&data, &negative}, true).status().code() == StatusCode::kInvalidArgument);
  const Tensor meta_sizes = Tensor::meta(DType::kI64, {3});
  std::vector<TensorDesc> descs;
  const Tensor* inputs[] = {&data, &meta_sizes};
  CHECK(infer_node(variable, inputs, descs).code() == StatusCode::kUnsupported);
}

// ---- Slice ------------------------------------------------------------------------------------

namespace {

// The indices ONNX Slice picks along one axis, enumerated one step at a time. The clamping is the
// spec's; it matches Python slicing except that a start below -dim with a negative step clamps to 0
// (ONNX) rather than -1 (Python).
std::vector<int64_t> spec_slice(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  start = std::clamp<int64_t>(start, 0, step > 0 ? dim : dim - 1);
  end = std::clamp<int64_t>(end, step > 0 ? 0 : -1, step > 0 ? dim : dim - 1);
  std::vector<int64_t> picked;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) {
    picked.push_back(i);
    if (step > 0 ? step >= end - i : step <= end - i) break;  // the next step passes end (without overflowing)
  }
  return picked;
}

}  // namespace

TEST_CASE("slice: ONNX examples, negative steps, out-of-range starts and ends") {
  const Tensor data = f32s({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Node node = make_node(OpKind::kSlice, 5);
  const Tensor starts = i64s({1, 0}), ends = i64s({2, 3}), axes = i64s({0, 1}), steps = i64s({1, 2});
  Tensor out = run_one(node, {&data, &starts, &ends, &axes, &steps});
  CHECK(out.shape() == Shape{1, 2});
  CHECK(values_of(out) == std::vector<float>{5, 7});

  const Tensor starts2 = i64s({0, 1}), ends2 = i64s({-1, 1000});
  out = run_one(make_node(OpKind::kSlice, 3), {&data, &starts2, &ends2});
  CHECK(values_of(out) == std::vector<float>{2, 3, 4});

  const Tensor rev_start = i64s({-1}), rev_end = i64s({INT64_MIN}), rev_axis = i64s({-1}), rev_step = i64s({-1});
  out = run_one(node, {&data, &rev_start, &rev_end, &rev_axis, &rev_step});
  CHECK(values_of(out) == std::vector<float>{4, 3, 2, 1, 8, 7, 6, 5});

  const Tensor far_start = i64s({1000}), far_end = i64s({INT64_MAX}), one_axis = i64s({1}), one_step = i64s({1});
  out = run_one(node, {&data, &far_start, &far_end, &one_axis, &one_step});
  CHECK(out.shape() == Shape{2, 0});

  const Tensor i32_start = Tensor::from_vector<int32_t>({1}, {3}), i32_end = Tensor::from_vector<int32_t>({1}, {0});
  const Tensor i32_axis = Tensor::from_vector<int32_t>({1}, {1}), i32_step = Tensor::from_vector<int32_t>({1}, {-2});
  out = run_one(node, {&data, &i32_start, &i32_end, &i32_axis, &i32_step});
  CHECK(values_of(out) == std::vector<float>{4, 2, 8, 6});

  // A start below -dim with a negative step clamps to 0 (the spec), not to -1 (Python).
  const Tensor low_start = i64s({-10}), low_end = i64s({INT64_MIN});
  out = run_one(node, {&data, &low_start, &low_end, &rev_axis, &rev_step});
  CHECK(values_of(out) == std::vector<float>{1, 5});
}

TEST_CASE("slice: errors") {
  const Tensor data = f32s({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Node node = make_node(OpKind::kSlice, 5);
  const Tensor s = i64s({0}), e = i64s({1}), axis = i64s({0}), zero_step = i64s({0}), bad_axis = i64s({2});
  const Tensor two = i64s({0, 0}), repeated = i64s({1, -1}), floats = f32s({1}, {0});
  CHECK(run_op(node, {&data, &s, &e, &axis, &zero_step}, true).status().code() == StatusCode::kInvalidArgument);
  CHECK(run_op(node, {&data, &s, &e, &bad_axis, nullptr}, true).status().code() == StatusCode::kInvalidArgument);
  CHECK(run_op(node, {&data, &s, &two, nullptr, nullptr}, true).status().code() == StatusCode::kInvalidArgument);
  CHECK(run_op(node, {&data, &two, &two, &repeated, nullptr}, true).status().code() == StatusCode::kInvalidArgument);
  CHECK(run_op(node, {&data, &floats, &e, nullptr, nullptr}, true).status().code() == StatusCode::kInvalidArgument);
  const Tensor meta_starts = Tensor::meta(DType::kI64, {1});
  const Status status = run_op(node, {&data, &meta_starts, &e, nullptr, nullptr}, true).status();
  CHECK(status.code() == StatusCode::kUnsupported);
  CHECK(status.message().find("starts") != std::string::npos);
}

TEST_CASE("slice: random starts, ends, steps and axes match a step-by-step enumeration") {
  std::mt19937 rng(5);
  const int64_t specials[] = {INT64_MIN, INT64_MAX, -1000, 1000};
  for (DType dtype : kDTypes) {
    for (int trial = 0; trial < 60; ++trial) {
      const int rank = std::uniform_int_distribution<int>(1, 4)(rng);
      const Shape shape = random_shape(rng, rank, 6);
      const Tensor data = random_tensor(dtype, shape, rng, 0, 200);
      std::vector<int64_t> axes(static_cast<size_t>(rank));
      std::iota(axes.begin(), axes.end(), 0);
      std::shuffle(axes.begin(), axes.end(), rng);
      axes.resize(static_cast<size_t>(std::uniform_int_distribution<int>(1, rank)(rng)));
      std::vector<int64_t> starts, ends, steps, signed_axes;
      std::vector<std::vector<int64_t>> picked(static_cast<size_t>(rank));
      for (size_t d = 0; d < picked.size(); ++d) {
        picked[d].resize(static_cast<size_t>(shape[d]));
        std::iota(picked[d].begin(), picked[d].end(), 0);
      }
      for (int64_t axis : axes) {
        const int64_t dim = shape[static_cast<size_t>(axis)];
        const auto pick = [&] {
          return rng() % 5 == 0 ? specials[rng() % 4] : std::uniform_int_distribution<int64_t>(-dim - 2, dim + 2)(rng);
        };
        int64_t step = std::uniform_int_distribution<int64_t>(-3, 3)(rng);
        if (step == 0) step = rng() % 2 ? INT64_MAX : INT64_MIN;
        starts.push_back(pick());
        ends.push_back(pick());
        steps.push_back(step);
        signed_axes.push_back(rng() % 2 ? axis : axis - rank);
        picked[static_cast<size_t>(axis)] = spec_slice(dim, starts.back(), ends.back(), step);
      }
      const Tensor t_starts = i64s(starts), t_ends = i64s(ends), t_axes = i64s(signed_axes), t_steps = i64s(steps);
      const Tensor out = run_one(make_node(OpKind::kSlice, 5), {&data, &t_starts, &t_ends, &t_axes, &t_steps});
      Shape expected_shape;
      for (const auto& p : picked) expected_shape.push_back(static_cast<int64_t>(p.size()));
      REQUIRE(out.shape() == expected_shape);
      Tensor expected = Tensor::empty(dtype, expected_shape);
      for (int64_t flat = 0; flat < expected.numel(); ++flat) {
        std::vector<int64_t> index = unravel(flat, expected_shape);
        for (size_t d = 0; d < index.size(); ++d) index[d] = picked[d][static_cast<size_t>(index[d])];
        copy_element(data, ravel(index, shape), expected, flat);
      }
      CHECK(identical(out, expected));
    }
  }
}

// ---- Transpose --------------------------------------------------------------------------------

TEST_CASE("transpose: hand-computed, default perm, invalid perms") {
  const Tensor data = f32s({2, 3}, {1, 2, 3, 4, 5, 6});
  Node node = make_node(OpKind::kTranspose, 1);
  Tensor out = run_one(node, {&data});
  CHECK(out.shape() == Shape{3, 2});
  CHECK(values_of(out) == std::vector<float>{1, 4, 2, 5, 3, 6});
  node.attrs.set("perm", std::vector<int64_t>{0, 0});
  CHECK(run_op(node, {&data}, true).status().code() == StatusCode::kInvalidArgument);
  node.attrs.set("perm", std::vector<int64_t>{0, 2});
  CHECK(run_op(node, {&data}, true).status().code() == StatusCode::kInvalidArgument);
  node.attrs.set("perm", std::vector<int64_t>{1, 0, 2});
  CHECK(run_op(node, {&data}, true).status().code() == StatusCode::kInvalidArgument);
  // A scalar is its own transpose.
  const Tensor scalar = Tensor::scalar<float>(2.5f);
  const Tensor same = run_one(make_node(OpKind::kTranspose, 1), {&scalar});
  CHECK(same.rank() == 0);
  CHECK(values_of(same) == std::vector<float>{2.5f});
}

TEST_CASE("transpose of a fused Concat: each input permuted into its block of the output") {
  // [1, 2, 3] and [1, 2, 1] joined on axis 2, then [1, 4, 2].
  const Tensor a = f32s({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = f32s({1, 2, 1}, {7, 8});
  Node node = make_node(OpKind::kTranspose, 2);
  node.attrs.set("perm", std::vector<int64_t>{0, 2, 1});
  node.attrs.set(kTransposeConcatAxis, int64_t{2});
  for (const bool reference : {true, false}) {
    auto result = run_op(node, {&a, &b}, reference);
    REQUIRE(result.is_ok());
    CHECK((*result)[0].shape() == Shape{1, 4, 2});
    CHECK(values_of((*result)[0]) == std::vector<float>{1, 4, 2, 5, 3, 6, 7, 8});
  }
}

TEST_CASE("transpose of a fused Concat with outer dims (a batch made dynamic) equals the Concat, then the Transpose") {
  // Dims before the concatenated axis in the output: one block per input per outer index. YOLOX's
  // head with a batch of two, and a rank-4 case with two outer dims, one of them swapped.
  struct Case {
    Shape a, b;
    int64_t axis;
    std::vector<int64_t> perm;
  };
  const Case cases[] = {
      {{2, 5, 3}, {2, 5, 2}, 2, {0, 2, 1}},
      {{2, 3, 2, 4}, {2, 3, 2, 1}, 3, {1, 0, 3, 2}},
  };
  std::mt19937 rng(17);
  for (const Case& c : cases) {
    CAPTURE(c.axis);
    const Tensor a = random_tensor(DType::kF32, c.a, rng);
    const Tensor b = random_tensor(DType::kF32, c.b, rng);
    Node concat = make_node(OpKind::kConcat, 2);
    concat.attrs.set("axis", c.axis);
    const Tensor joined = run_one(concat, {&a, &b});
    Node transpose = make_node(OpKind::kTranspose, 1);
    transpose.attrs.set("perm", c.perm);
    const Tensor expected = run_one(transpose, {&joined});
    Node fused = make_node(OpKind::kTranspose, 2);
    fused.attrs.set("perm", c.perm);
    fused.attrs.set(kTransposeConcatAxis, c.axis);
    for (const bool reference : {true, false}) {
      auto result = run_op(fused, {&a, &b}, reference);
      REQUIRE_MESSAGE(result.is_ok(), result.status().to_string());
      CHECK((*result)[0].shape() == expected.shape());
      CHECK(values_of((*result)[0]) == values_of(expected));
    }
  }
}

TEST_CASE("transpose: random permutations of rank 1-5 match a naive index map") {
  std::mt19937 rng(3);
  for (DType dtype : kDTypes) {
    for (int trial = 0; trial < 40; ++trial) {
      const int rank = std::uniform_int_distribution<int>(1, 5)(rng);
      const Shape shape = random_shape(rng, rank, 5);
      const Tensor data = random_tensor(dtype, shape, rng, 0, 200);
      std::vector<int64_t> perm(static_cast<size_t>(rank));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      Node node = make_node(OpKind::kTranspose, 1);
      node.attrs.set("perm", perm);
      ThreadPool pool(2);
      auto result = run_op(node, {&data}, true, trial % 2 ? &pool : nullptr);
      REQUIRE(result.is_ok());
      const Tensor& out = (*result)[0];
      Tensor expected = Tensor::empty(dtype, out.shape());
      for (int64_t flat = 0; flat < out.numel(); ++flat) {
        const std::vector<int64_t> index = unravel(flat, out.shape());
        std::vector<int64_t> source(index.size());
        for (size_t d = 0; d < perm.size(); ++d) source[static_cast<size_t>(perm[d])] = index[d];
        copy_element(data, ravel(source, shape), expected, flat);
      }
      CHECK(identical(out, expected));
    }
  }
}

// Transposes of the last two dims take a tiled path (strided_copy.cpp); these span several 32 x 32
// tiles with partial edges, with and without outer dims and threads (YOLOX's head: [1, 85, 3549]).
TEST_CASE("transpose: large transposes of the two innermost dims match a naive index map") {
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
  };
  const Case cases[] = {{{1, 85, 133}, {0, 2, 1}},
                        {{2, 3, 40, 70}, {0, 1, 3, 2}},
                        {{3, 33, 65}, {0, 2, 1}},
                        {{70, 45}, {1, 0}},
                        {{5, 64, 31}, {2, 0, 1}}};
  std::mt19937 rng(17);
  ThreadPool pool(2);
  for (const Case& c : cases) {
    const Tensor data = random_tensor(DType::kF32, c.shape, rng, -10, 10);
    Node node = make_node(OpKind::kTranspose, 1);
    node.attrs.set("perm", c.perm);
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      auto result = run_op(node, {&data}, false, p);
      REQUIRE(result.is_ok());
      const Tensor& out = (*result)[0];
      Tensor expected = Tensor::empty(DType::kF32, out.shape());
      for (int64_t flat = 0; flat < out.numel(); ++flat) {
        const std::vector<int64_t> index = unravel(flat, out.shape());
        std::vector<int64_t> source(index.size());
        for (size_t d = 0; d < c.perm.size(); ++d) source[static_cast<size_t>(c.perm[d])] = index[d];
        copy_element(data, ravel(source, c.shape), expected, flat);
      }
      CHECK(identical(out, expected));
    }
  }
}

// ---- Gather -----------------------------------------------------------------------------------

TEST_CASE("gather: ONNX examples, negative and scalar indices, out-of-range error") {
  const Tensor data = f32s({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  const Tensor indices = Tensor::from_vector<int64_t>({2, 2}, {0, 1, 1, 2});
  Tensor out = run_one(make_node(OpKind::kGather, 2), {&data, &indices});
  CHECK(out.shape() == Shape{2, 2, 2});
  CHECK(values_of(out) == std::vector<float>{1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f});

  const Tensor data3 = f32s({3, 3}, {1.0f, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f});
  const Tensor columns = Tensor::from_vector<int32_t>({1, 2}, {0, -1});
  Node axis1 = make_node(OpKind::kGather, 2);
  axis1.attrs.set("axis", int64_t{1});
  out = run_one(axis1, {&data3, &columns});
  CHECK(out.shape() == Shape{3, 1, 2});
  CHECK(values_of(out) == std::vector<float>{1.0f, 1.9f, 2.3f, 3.9f, 4.5f, 5.9f});

  const Tensor scalar = Tensor::scalar<int64_t>(-3);
  out = run_one(make_node(OpKind::kGather, 2), {&data, &scalar});
  CHECK(out.shape() == Shape{2});
  CHECK(values_of(out) == std::vector<float>{1.0f, 1.2f});

  const Tensor bad = i64s({0, 7});
  const Tensor data5 = f32s({5}, {0, 1, 2, 3, 4});
  const Status status = run_op(make_node(OpKind::kGather, 2), {&data5, &bad}, true).status();
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find("index 7 out of range for axis 0 of size 5") != std::string::npos);
  const Tensor too_negative = i64s({-6});
  CHECK_FALSE(run_op(make_node(OpKind::kGather, 2), {&data5, &too_negative}, true).is_ok());
  const Tensor float_indices = f32s({1}, {0});
  CHECK(run_op(make_node(OpKind::kGather, 2), {&data5, &float_indices}, true).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("gather: random axes and indices match a naive index map") {
  std::mt19937 rng(9);
  for (DType dtype : kDTypes) {
    for (int trial = 0; trial < 30; ++trial) {
      const int rank = std::uniform_int_distribution<int>(1, 4)(rng);
      const Shape shape = random_shape(rng, rank, 4);
      const Tensor data = random_tensor(dtype, shape, rng, 0, 200);
      const int axis = std::uniform_int_distribution<int>(0, rank - 1)(rng);
      const int64_t dim = shape[static_cast<size_t>(axis)];
      const Tensor indices =
          random_tensor(DType::kI64, random_shape(rng, std::uniform_int_distribution<int>(0, 2)(rng), 3), rng,
                        static_cast<double>(-dim), static_cast<double>(dim - 1));
      Node node = make_node(OpKind::kGather, 2);
      node.attrs.set("axis", int64_t{axis - rank * (trial % 2)});
      const Tensor out = run_one(node, {&data, &indices});
      Tensor expected = Tensor::empty(dtype, out.shape());
      for (int64_t flat = 0; flat < out.numel(); ++flat) {
        const std::vector<int64_t> index = unravel(flat, out.shape());
        std::vector<int64_t> source(index.begin(), index.begin() + axis);
        const std::vector<int64_t> which(index.begin() + axis, index.begin() + axis + indices.rank());
        const int64_t i = indices.int_at(ravel(which, indices.shape()));
        source.push_back(i < 0 ? i + dim : i);
        source.insert(source.end(), index.begin() + axis + indices.rank(), index.end());
        copy_element(data, ravel(source, shape), expected, flat);
      }
      CHECK(identical(out, expected));
    }
  }
}

// ---- Pad --------------------------------------------------------------------------------------

TEST_CASE("pad: ONNX examples for constant, reflect and edge") {
  const Tensor data = f32s({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  const Tensor pads = i64s({0, 2, 0, 0});
  Node node = make_node(OpKind::kPad, 2);
  Tensor out = run_one(node, {&data, &pads});
  CHECK(out.shape() == Shape{3, 4});
  CHECK(values_of(out) == std::vector<float>{0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f});
  const Tensor value = Tensor::scalar<float>(9.0f);
  out = run_one(make_node(OpKind::kPad, 3), {&data, &pads, &value});
  CHECK(values_of(out) == std::vector<float>{9, 9, 1.0f, 1.2f, 9, 9, 2.3f, 3.4f, 9, 9, 4.5f, 5.7f});
  node.attrs.set("mode", std::string("reflect"));
  out = run_one(node, {&data, &pads});
  CHECK(values_of(out) == std::vector<float>{1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f});
  node.attrs.set("mode", std::string("edge"));
  out = run_one(node, {&data, &pads});
  CHECK(values_of(out) == std::vector<float>{1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f});
  const Tensor crop = i64s({-1, 0, 0, -1});
  node.attrs.set("mode", std::string("constant"));
  out = run_one(node, {&data, &crop});
  CHECK(values_of(out) == std::vector<float>{2.3f, 4.5f});
}

TEST_CASE("pad: errors") {
  const Tensor data = f32s({3, 2}, {1, 2, 3, 4, 5, 6});
  Node node = make_node(OpKind::kPad, 2);
  const Tensor short_pads = i64s({1, 1});
  CHECK(run_op(node, {&data, &short_pads}, true).status().code() == StatusCode::kInvalidArgument);
  const Tensor over_crop = i64s({-2, 0, -2, 0});
  CHECK(run_op(node, {&data, &over_crop}, true).status().code() == StatusCode::kInvalidArgument);
  const Tensor huge = i64s({INT64_MAX, 0, INT64_MAX, 0});
  CHECK(run_op(node, {&data, &huge}, true).status().code() == StatusCode::kInvalidArgument);
  const Tensor wrong_value = Tensor::scalar<int64_t>(1);
  const Tensor pads = i64s({0, 1, 0, 1});
  CHECK(run_op(make_node(OpKind::kPad, 3), {&data, &pads, &wrong_value}, true).status().code() ==
        StatusCode::kInvalidArgument);
  node.attrs.set("mode", std::string("wrap"));
  CHECK(run_op(node, {&data, &pads}, true).status().code() == StatusCode::kUnsupported);
  node.attrs.set("mode", std::string("edge"));
  const Tensor empty = f32s({0, 2}, {});
  const Tensor grow_empty = i64s({1, 0, 0, 0});
  CHECK(run_op(node, {&empty, &grow_empty}, true).status().code() == StatusCode::kInvalidArgument);
}

namespace {

// numpy.pad's semantics after cropping negative pads: reflect bounces off both ends without
// repeating the edge element, edge repeats it.
int64_t naive_pad_source(const std::string& mode, int64_t c, int64_t n) {
  if (c >= 0 && c < n) return c;
  if (mode == "constant") return -1;
  if (mode == "edge" || n == 1) return std::clamp<int64_t>(c, 0, n - 1);
  while (c < 0 || c >= n) c = c < 0 ? -c : 2 * (n - 1) - c;
  return c;
}

}  // namespace

TEST_CASE("pad: random pads in every mode match numpy-style padding") {
  std::mt19937 rng(21);
  for (const std::string mode : {"constant", "reflect", "edge"}) {
    for (DType dtype : kDTypes) {
      for (int trial = 0; trial < 15; ++trial) {
        const int rank = std::uniform_int_distribution<int>(1, 4)(rng);
        const Shape shape = random_shape(rng, rank, 4);
        const Tensor data = random_tensor(dtype, shape, rng, 0, 200);
        std::vector<int64_t> pads(2 * static_cast<size_t>(rank));
        for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
          // Crop at most one side, and keep at least one element so reflect/edge have a source.
          const int64_t dim = shape[d];
          pads[d] = std::uniform_int_distribution<int64_t>(-(dim - 1), 6)(rng);
          pads[d + static_cast<size_t>(rank)] =
              std::uniform_int_distribution<int64_t>(pads[d] < 0 ? 0 : -(dim - 1), 6)(rng);
        }
        const Tensor t_pads = i64s(pads);
        const Tensor fill = random_tensor(dtype, {}, rng, 0, 200);
        Node node = make_node(OpKind::kPad, 3);
        node.attrs.set("mode", mode);
        const Tensor out = run_one(node, {&data, &t_pads, &fill});
        Tensor expected = Tensor::empty(dtype, out.shape());
        for (int64_t flat = 0; flat < out.numel(); ++flat) {
          std::vector<int64_t> index = unravel(flat, out.shape());
          bool constant = false;
          for (size_t d = 0; d < index.size(); ++d) {
            const int64_t lo = std::max<int64_t>(-pads[d], 0);
            const int64_t kept = shape[d] - lo - std::max<int64_t>(-pads[d + index.size()], 0);
            const int64_t c = naive_pad_source(mode, index[d] - std::max<int64_t>(pads[d], 0), kept);
            constant = constant || c < 0;
            index[d] = lo + c;
          }
          if (constant) {
            copy_element(fill, 0, expected, flat);
          } else {
            copy_element(data, ravel(index, shape), expected, flat);
          }
        }
        CHECK_MESSAGE(identical(out, expected), mode, " pads ", shape_to_string(pads), " on ", shape_to_string(shape));
      }
    }
  }
}
