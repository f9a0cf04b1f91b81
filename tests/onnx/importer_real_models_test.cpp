// The real detectors (assets folder): op counts as documented in models/README.md, input and
// output names and shapes.
#include <doctest/doctest.h>

#include "tests/onnx/onnx_test_models.h"
#include "tests/support/assets.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

std::shared_ptr<Graph> import_asset(const std::filesystem::path& path) {
  auto graph = import_onnx_file(path.string());
  REQUIRE_MESSAGE(graph.is_ok(), graph.status().to_string());
  return std::move(graph).value();
}

void check_value(const Graph& graph, ValueId id, const std::string& name, const Shape& shape) {
  const Value& value = graph.value(id);
  CHECK(value.name == name);
  CHECK(value.desc.dtype == DType::kF32);
  CHECK_MESSAGE(value.desc.shape == shape, name, ": ", shape_to_string(value.desc.shape));
}

}  // namespace

TEST_CASE("real model: YOLOX-nano") {
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  auto graph = import_asset(path);
  const std::map<std::string, int> expected{{"Conv", 113},  {"Sigmoid", 110}, {"Mul", 104},   {"Concat", 18},
                                            {"Slice", 8},   {"Add", 7},       {"MaxPool", 3}, {"Resize", 2},
                                            {"Reshape", 3}, {"Transpose", 1}};
  CHECK(count_ops(*graph) == expected);
  REQUIRE(graph->inputs().size() == 1);
  check_value(*graph, graph->inputs()[0], "images", {1, 3, 416, 416});
  REQUIRE(graph->outputs().size() == 1);
  check_value(*graph, graph->outputs()[0], "output", {1, 3549, 85});
  for (const Node& node : graph->nodes()) {
    if (node.op == OpKind::kResize) CHECK(node.attrs.get_string("mode", "") == "nearest");
  }
}

TEST_CASE("real model: BlazeFace front 128 and back 256") {
  struct Case {
    std::string file;
    int64_t size;
    std::map<std::string, int> ops;  // the README's op list; counts pinned from the import
  };
  const Case cases[] = {
      {"models/blazeface_front_128.onnx",
       128,
       {{"Add", 16},
        {"Concat", 11},
        {"ConstantOfShape", 11},
        {"Conv", 37},
        {"MaxPool", 3},
        {"Relu", 17},
        {"Reshape", 4},
        {"Transpose", 5}}},
      {"models/blazeface_back_256.onnx",
       256,
       {{"Add", 31},
        {"Concat", 2},
        {"ConstantOfShape", 2},
        {"Conv", 69},
        {"MaxPool", 3},
        {"Relu", 33},
        {"Reshape", 4},
        {"Transpose", 5}}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    ASSET_OR_SKIP(path, c.file);
    auto graph = import_asset(path);
    CHECK(count_ops(*graph) == c.ops);
    REQUIRE(graph->inputs().size() == 1);
    check_value(*graph, graph->inputs()[0], "input:0", {1, c.size, c.size, 3});
    REQUIRE(graph->outputs().size() == 4);
    check_value(*graph, graph->outputs()[0], "Identity:0", {1, 512, 1});
    check_value(*graph, graph->outputs()[1], "Identity_1:0", {1, 384, 1});
    check_value(*graph, graph->outputs()[2], "Identity_2:0", {1, 512, 16});
    check_value(*graph, graph->outputs()[3], "Identity_3:0", {1, 384, 16});
  }
}
