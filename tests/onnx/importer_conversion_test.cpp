// Older op forms convert to the IR's opset-13 form; the IR is checked node by node.
#include <doctest/doctest.h>

#include "tests/onnx/onnx_test_models.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

std::shared_ptr<Graph> import_ok(const OnnxModelBuilder& m, const OnnxImportOptions& options = {}) {
  auto graph = import_model(m, options);
  REQUIRE_MESSAGE(graph.is_ok(), graph.status().to_string());
  return std::move(graph).value();
}

// The constant data of input `index` of `node`.
const Tensor& constant_input(const Graph& graph, const Node& node, int index) {
  REQUIRE(node.has_input(index));
  const Value& value = graph.value(node.inputs[static_cast<size_t>(index)]);
  REQUIRE_MESSAGE(value.initializer.has_value(), "input ", index, " of ", node.name, " is not a constant");
  return *value.initializer;
}

OnnxModelBuilder unary_model(int opset, const std::string& op, std::vector<int64_t> dims = {1, 3, 1, 4}) {
  OnnxModelBuilder m(opset);
  m.input("x", dims);
  m.node(op, {"x"}, {"y"}, "n0");
  m.output("y");
  return m;
}

}  // namespace

TEST_CASE("conversion: graph inputs, outputs, initializers and names") {
  OnnxModelBuilder m(13);
  m.input("x", {-1, 3});
  m.initializer("b", {3}, {1, 2, 3});
  m.node("Add", {"x", "b"}, {"s"}, "add0");
  m.node("Relu", {"s"}, {"y"});
  m.output("y");
  auto graph = import_ok(m);
  REQUIRE(graph->inputs().size() == 1);
  const Value& x = graph->value(graph->inputs()[0]);
  CHECK(x.name == "x");
  CHECK(x.desc == TensorDesc{DType::kF32, {-1, 3}});
  REQUIRE(graph->nodes().size() == 2);
  CHECK(graph->nodes()[0].name == "add0");
  CHECK(graph->nodes()[1].name == "Relu_1");
  CHECK(graph->value(graph->nodes()[0].inputs[1]).initializer.has_value());
  REQUIRE(graph->outputs().size() == 1);
  CHECK(graph->value(graph->outputs()[0]).name == "y");
  CHECK(graph->value(graph->outputs()[0]).desc.shape == Shape{-1, 3});  // from shape inference
}

TEST_CASE("conversion: Constant nodes become initializers") {
  OnnxModelBuilder m(13);
  m.input("x", {2});
  onnx::NodeProto* c = m.node("Constant", {}, {"k"}, "const0");
  onnx::AttributeProto* value = c->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(2);
  value->mutable_t()->add_float_data(3.0f);
  value->mutable_t()->add_float_data(4.0f);
  m.node("Mul", {"x", "k"}, {"y"}, "mul0");
  m.output("y");
  auto graph = import_ok(m);
  CHECK(count_ops(*graph) == std::map<std::string, int>{{"Mul", 1}});
  CHECK(constant_input(*graph, graph->nodes()[0], 1).values<float>()[1] == 4.0f);

  OnnxModelBuilder ints(13);
  ints.input("x", {2, 3});
  set_ints(ints.node("Constant", {}, {"shape"}, "c"), "value_ints", {3, 2});
  ints.node("Reshape", {"x", "shape"}, {"y"}, "r");
  ints.output("y", onnx::TensorProto::FLOAT, {3, 2});
  auto g2 = import_ok(ints);
  CHECK(constant_input(*g2, only_node(*g2, OpKind::kReshape), 1).to_int64_vector() == std::vector<int64_t>{3, 2});
}

TEST_CASE("conversion: Squeeze/Unsqueeze-11 axes attribute becomes an int64 input") {
  OnnxModelBuilder sq = unary_model(11, "Squeeze");
  set_ints(sq.graph().mutable_node(0), "axes", {2});
  auto g = import_ok(sq);
  const Node& squeeze = only_node(*g, OpKind::kSqueeze);
  CHECK(squeeze.attrs.entries().empty());
  const Tensor& axes = constant_input(*g, squeeze, 1);
  CHECK(axes.dtype() == DType::kI64);
  CHECK(axes.to_int64_vector() == std::vector<int64_t>{2});

  OnnxModelBuilder un = unary_model(11, "Unsqueeze");
  set_ints(un.graph().mutable_node(0), "axes", {0, -1});
  auto g2 = import_ok(un);
  CHECK(constant_input(*g2, only_node(*g2, OpKind::kUnsqueeze), 1).to_int64_vector() == std::vector<int64_t>{0, -1});

  OnnxModelBuilder bad = unary_model(11, "Squeeze");
  set_ints(bad.graph().mutable_node(0), "axes", {1});
  CHECK_IMPORT_ERROR(import_model(bad), StatusCode::kInvalidModel, "cannot squeeze axis 1 of size 3");
}

TEST_CASE("conversion: Split-11 split attribute becomes an input; Split-18 num_outputs") {
  OnnxModelBuilder m(11);
  m.input("x", {6, 2});
  onnx::NodeProto* split = m.node("Split", {"x"}, {"a", "b"}, "split0");
  set_ints(split, "split", {2, 4});
  m.output("a");
  m.output("b");
  auto g = import_ok(m);
  const Node& node = only_node(*g, OpKind::kSplit);
  CHECK(constant_input(*g, node, 1).to_int64_vector() == std::vector<int64_t>{2, 4});

  OnnxModelBuilder m18(18);
  m18.input("x", {7});
  set_int(m18.node("Split", {"x"}, {"a", "b", "c"}, "split0"), "num_outputs", 3);
  m18.output("a");
  m18.output("b");
  m18.output("c");
  auto g18 = import_ok(m18);
  CHECK(constant_input(*g18, only_node(*g18, OpKind::kSplit), 1).to_int64_vector() == std::vector<int64_t>{3, 3, 1});
}

TEST_CASE("conversion: Clip-6 min/max attributes become scalar inputs of the input's type") {
  OnnxModelBuilder m = unary_model(6 + 1, "Clip");  // opset 7 still has Clip-6
  set_float(m.graph().mutable_node(0), "min", -1.0f);
  set_float(m.graph().mutable_node(0), "max", 6.0f);
  auto g = import_ok(m);
  const Node& clip = only_node(*g, OpKind::kClip);
  CHECK(clip.attrs.entries().empty());
  CHECK(constant_input(*g, clip, 1).desc() == TensorDesc{DType::kF32, {}});
  CHECK(constant_input(*g, clip, 1).values<float>()[0] == -1.0f);
  CHECK(constant_input(*g, clip, 2).values<float>()[0] == 6.0f);

  OnnxModelBuilder half(7);
  half.input("x", {4}, onnx::TensorProto::FLOAT16);
  set_float(half.node("Clip", {"x"}, {"y"}, "clip0"), "max", 6.0f);
  half.output("y", onnx::TensorProto::FLOAT16);
  auto gh = import_ok(half);
  const Node& clip_half = only_node(*gh, OpKind::kClip);
  CHECK_FALSE(clip_half.has_input(1));  // no min: omitted
  CHECK(constant_input(*gh, clip_half, 2).dtype() == DType::kF16);
  CHECK(half_to_float(constant_input(*gh, clip_half, 2).values<Half>()[0]) == 6.0f);
}

TEST_CASE("conversion: optional inputs given as empty names map to kNoValue") {
  OnnxModelBuilder m(13);
  m.input("x", {4});
  m.initializer("hi", {}, {6.0f});
  m.node("Clip", {"x", "", "hi"}, {"y"}, "clip0");
  m.output("y");
  auto g = import_ok(m);
  const Node& clip = only_node(*g, OpKind::kClip);
  REQUIRE(clip.inputs.size() == 3);
  CHECK(clip.inputs[1] == kNoValue);
  CHECK(clip.inputs[2] != kNoValue);
}

TEST_CASE("conversion: Softmax before opset 13 is marked legacy_flatten with an explicit axis") {
  auto g11 = import_ok(unary_model(11, "Softmax"));
  const Node& legacy = only_node(*g11, OpKind::kSoftmax);
  CHECK(legacy.attrs.get_int("legacy_flatten", 0) == 1);
  CHECK(legacy.attrs.get_int("axis", -99) == 1);

  auto g13 = import_ok(unary_model(13, "Softmax"));
  const Node& modern = only_node(*g13, OpKind::kSoftmax);
  CHECK_FALSE(modern.attrs.has("legacy_flatten"));
  CHECK(modern.attrs.get_int("axis", -99) == -1);
}

TEST_CASE("conversion: Upsample-7 and Upsample-9 become Resize (asymmetric, floor)") {
  OnnxModelBuilder m7 = unary_model(7, "Upsample");
  set_floats(m7.graph().mutable_node(0), "scales", {1, 1, 2, 2});
  auto g7 = import_ok(m7);
  const Node& r7 = only_node(*g7, OpKind::kResize);
  CHECK_FALSE(r7.has_input(1));
  CHECK(constant_input(*g7, r7, 2).values<float>()[3] == 2.0f);
  CHECK_FALSE(r7.has_input(3));
  CHECK(r7.attrs.get_string("mode", "") == "nearest");
  CHECK(r7.attrs.get_string("coordinate_transformation_mode", "") == "asymmetric");
  CHECK(r7.attrs.get_string("nearest_mode", "") == "floor");

  OnnxModelBuilder m9(9);
  m9.input("x", {1, 3, 1, 4});
  m9.initializer("scales", {4}, {1, 1, 2, 2});
  set_string(m9.node("Upsample", {"x", "scales"}, {"y"}, "up"), "mode", "linear");
  m9.output("y");
  auto g9 = import_ok(m9);
  const Node& r9 = only_node(*g9, OpKind::kResize);
  CHECK(r9.inputs.size() == 3);
  CHECK(r9.inputs[1] == kNoValue);
  CHECK(r9.attrs.get_string("mode", "") == "linear");
  CHECK_FALSE(r9.attrs.has("nearest_mode"));
}

TEST_CASE("conversion: Resize-10 and Resize-11 inputs in opset-13 form") {
  OnnxModelBuilder m10(10);
  m10.input("x", {1, 1, 2, 2});
  m10.initializer("scales", {4}, {1, 1, 2, 2});
  m10.node("Resize", {"x", "scales"}, {"y"}, "resize0");
  m10.output("y");
  auto g10 = import_ok(m10);
  const Node& r10 = only_node(*g10, OpKind::kResize);
  CHECK(r10.inputs[1] == kNoValue);
  CHECK(constant_input(*g10, r10, 2).numel() == 4);
  CHECK(r10.attrs.get_string("coordinate_transformation_mode", "") == "asymmetric");

  OnnxModelBuilder m11(11);
  m11.input("x", {1, 1, 2, 2});
  m11.initializer("roi", {0}, {});
  m11.initializer("scales", {0}, {});
  m11.initializer_i64("sizes", {4}, {1, 1, 4, 4});
  m11.node("Resize", {"x", "roi", "scales", "sizes"}, {"y"}, "resize1");
  m11.output("y");
  auto g11 = import_ok(m11);
  const Node& r11 = only_node(*g11, OpKind::kResize);
  CHECK(r11.inputs[1] == kNoValue);
  CHECK(r11.inputs[2] == kNoValue);
  CHECK(constant_input(*g11, r11, 3).to_int64_vector() == std::vector<int64_t>{1, 1, 4, 4});
  CHECK(r11.attrs.get_string("coordinate_transformation_mode", "") == "half_pixel");

  OnnxModelBuilder both(13);
  both.input("x", {1, 1, 2, 2});
  both.initializer("scales", {4}, {1, 1, 2, 2});
  both.initializer_i64("sizes", {4}, {1, 1, 4, 4});
  both.node("Resize", {"x", "", "scales", "sizes"}, {"y"}, "resize2");
  both.output("y");
  CHECK_IMPORT_ERROR(import_model(both), StatusCode::kInvalidModel, "exactly one of inputs 'scales' and 'sizes'");
}

TEST_CASE("conversion: Pad-2 attributes and Slice-1 attributes become inputs") {
  OnnxModelBuilder pad(7);
  pad.input("x", {2, 3});
  onnx::NodeProto* node = pad.node("Pad", {"x"}, {"y"}, "pad0");
  set_ints(node, "pads", {0, 1, 0, 1});
  set_float(node, "value", 2.5f);
  pad.output("y");
  auto g = import_ok(pad);
  const Node& p = only_node(*g, OpKind::kPad);
  CHECK(constant_input(*g, p, 1).to_int64_vector() == std::vector<int64_t>{0, 1, 0, 1});
  CHECK(constant_input(*g, p, 2).values<float>()[0] == 2.5f);

  OnnxModelBuilder slice(9);
  slice.input("x", {4, 5});
  onnx::NodeProto* s = slice.node("Slice", {"x"}, {"y"}, "slice0");
  set_ints(s, "starts", {1});
  set_ints(s, "ends", {3});
  set_ints(s, "axes", {1});
  slice.output("y");
  auto gs = import_ok(slice);
  const Node& sl = only_node(*gs, OpKind::kSlice);
  CHECK(constant_input(*gs, sl, 1).to_int64_vector() == std::vector<int64_t>{1});
  CHECK(constant_input(*gs, sl, 2).to_int64_vector() == std::vector<int64_t>{3});
  CHECK(constant_input(*gs, sl, 3).to_int64_vector() == std::vector<int64_t>{1});
}

TEST_CASE("conversion: ReduceMean-18 constant axes input becomes the attribute") {
  OnnxModelBuilder m(18);
  m.input("x", {2, 3, 4});
  m.initializer_i64("axes", {2}, {1, -1});
  set_int(m.node("ReduceMean", {"x", "axes"}, {"y"}, "mean0"), "keepdims", 0);
  m.output("y");
  auto g = import_ok(m);
  const Node& mean = only_node(*g, OpKind::kReduceMean);
  CHECK(mean.input_count() == 1);
  CHECK(mean.attrs.get_ints("axes") == std::vector<int64_t>{1, -1});
  CHECK(mean.attrs.get_int("keepdims", 1) == 0);

  OnnxModelBuilder noop(18);
  noop.input("x", {2, 3});
  set_int(noop.node("ReduceMean", {"x"}, {"y"}, "mean1"), "noop_with_empty_axes", 1);
  noop.output("y");
  auto gn = import_ok(noop);
  CHECK(count_ops(*gn) == std::map<std::string, int>{{"Identity", 1}});

  OnnxModelBuilder m13(13);
  m13.input("x", {2, 3, 4});
  set_ints(m13.node("ReduceMean", {"x"}, {"y"}, "mean2"), "axes", {0, 0});
  m13.output("y");
  CHECK_IMPORT_ERROR(import_model(m13), StatusCode::kInvalidModel, "repeats axis");
}

TEST_CASE("conversion: Dropout becomes Identity; BatchNormalization-7 accepts spatial=1 only") {
  OnnxModelBuilder drop(12);
  drop.input("x", {2, 3});
  set_int(drop.node("Dropout", {"x"}, {"y"}, "drop0"), "seed", 3);
  drop.output("y");
  auto g = import_ok(drop);
  const Node& identity = only_node(*g, OpKind::kIdentity);
  CHECK(identity.input_count() == 1);

  OnnxModelBuilder mask(12);
  mask.input("x", {2, 3});
  mask.node("Dropout", {"x"}, {"y", "mask"}, "drop1");
  mask.output("y");
  mask.output("mask", onnx::TensorProto::BOOL);
  CHECK_IMPORT_ERROR(import_model(mask), StatusCode::kUnsupported, "'mask' output");

  auto bn_model = [](int64_t spatial) {
    OnnxModelBuilder bn(7);
    bn.input("x", {1, 2, 2, 2});
    for (const char* name : {"scale", "bias", "mean", "var"}) bn.initializer(name, {2}, {1, 1});
    onnx::NodeProto* node = bn.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn0");
    set_int(node, "spatial", spatial);
    set_float(node, "epsilon", 1e-3f);
    bn.output("y");
    return bn;
  };
  auto gbn = import_ok(bn_model(1));
  CHECK(only_node(*gbn, OpKind::kBatchNormalization).attrs.get_float("epsilon", 0) == doctest::Approx(1e-3));
  CHECK_IMPORT_ERROR(import_model(bn_model(0)), StatusCode::kUnsupported, "spatial=0");
}

TEST_CASE("conversion: Conv and pool attributes pass through") {
  OnnxModelBuilder m(11);
  m.input("x", {1, 2, 8, 8});
  m.initializer("W", {4, 1, 3, 3}, std::vector<float>(36, 0.1f));
  onnx::NodeProto* conv = m.node("Conv", {"x", "W"}, {"c"}, "conv0");
  set_ints(conv, "strides", {2, 2});
  set_ints(conv, "pads", {1, 1, 1, 1});
  set_int(conv, "group", 2);
  onnx::NodeProto* pool = m.node("MaxPool", {"c"}, {"y"}, "pool0");
  set_ints(pool, "kernel_shape", {2, 2});
  set_int(pool, "ceil_mode", 1);
  m.output("y");
  auto g = import_ok(m);
  const Node& c = only_node(*g, OpKind::kConv);
  CHECK(c.attrs.get_ints("strides") == std::vector<int64_t>{2, 2});
  CHECK(c.attrs.get_ints("pads") == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(c.attrs.get_int("group", 1) == 2);
  const Node& p = only_node(*g, OpKind::kMaxPool);
  CHECK(p.attrs.get_ints("kernel_shape") == std::vector<int64_t>{2, 2});
  CHECK(p.attrs.get_int("ceil_mode", 0) == 1);
  CHECK(g->value(g->outputs()[0]).desc.shape == Shape{1, 4, 3, 3});  // from shape inference
}

TEST_CASE("conversion: input_dims fixes the symbolic dims of graph inputs before shape inference") {
  OnnxModelBuilder m;
  m.input("x", {-1, 3, -1, -1});
  m.initializer("w", {4, 3, 1, 1}, std::vector<float>(12, 0.5f));
  m.node("Conv", {"x", "w"}, {"y"});
  m.output("y");
  Result<std::shared_ptr<Graph>> symbolic = import_model(m);
  REQUIRE_MESSAGE(symbolic.is_ok(), symbolic.status().to_string());
  CHECK((*symbolic)->value((*symbolic)->inputs()[0]).desc.shape == Shape{-1, 3, -1, -1});

  OnnxImportOptions options;
  options.input_dims["x"] = {-1, -1, 8, 6};  // -1 keeps the declared dim
  Result<std::shared_ptr<Graph>> fixed = import_model(m, options);
  REQUIRE_MESSAGE(fixed.is_ok(), fixed.status().to_string());
  CHECK((*fixed)->value((*fixed)->inputs()[0]).desc.shape == Shape{-1, 3, 8, 6});
  // Shape inference carried the dims through the Conv.
  const Value& y = (*fixed)->value((*fixed)->outputs()[0]);
  CHECK(y.desc.shape[2] == 8);
  CHECK(y.desc.shape[3] == 6);

  options.input_dims["x"] = {1, 4, 8, 6};
  CHECK_IMPORT_ERROR(import_model(m, options), StatusCode::kInvalidArgument, "dim 1 is fixed at 3, given 4");
  options.input_dims = {{"x", {1, 3, 8}}};
  CHECK_IMPORT_ERROR(import_model(m, options), StatusCode::kInvalidArgument, "has rank 4, given 3 dims");
  options.input_dims = {{"image", {1, 3, 8, 8}}};
  CHECK_IMPORT_ERROR(import_model(m, options), StatusCode::kInvalidArgument, "no graph input named 'image'");
}
