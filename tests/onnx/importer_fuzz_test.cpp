// Seeded fuzzing of the model loader: real models, corrupted field by field (dims, types, data,
// op types, wiring, attributes, order) and byte by byte, then imported, optimised and, where the
// shapes are modest, run once. Every case must end in a model that runs or a Status with a
// message: no crash (the sanitizer job runs this too), no exception, no hang. The seed and case
// number of a failure reproduce it; EDGEFUSE_FUZZ_CASES scales the number of cases.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "fusion/pass_manager.h"
#include "models/onnx/onnx_importer.h"
#include "runtime/executor.h"
#include "tests/support/assets.h"

using namespace edgefuse;

namespace {

// Cases per model: `base` by default, scaled by EDGEFUSE_FUZZ_CASES / 100 (a percentage).
int case_count(int base) {
  const char* scale = std::getenv("EDGEFUSE_FUZZ_CASES");
  if (scale == nullptr) return base;
  return std::max(1, static_cast<int>(static_cast<int64_t>(base) * std::atoi(scale) / 100));
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

using Rng = std::mt19937_64;

int64_t pick(Rng& rng, int64_t count) {
  return std::uniform_int_distribution<int64_t>(0, count - 1)(rng);
}

// A dimension or integer attribute worth trying: the edges and a few plausible values.
int64_t odd_integer(Rng& rng, int64_t original) {
  // Neighbours wrap around (unsigned arithmetic) rather than overflow at the edges.
  const auto bits = static_cast<uint64_t>(original);
  const int64_t choices[] = {0,
                             1,
                             -1,
                             2,
                             3,
                             static_cast<int64_t>(bits + 1),
                             static_cast<int64_t>(bits - 1),
                             static_cast<int64_t>(bits * 2),
                             int64_t{1} << 31,
                             -7,
                             64,
                             65,
                             13,
                             4,
                             1000003,
                             int64_t{1} << 40,
                             std::numeric_limits<int64_t>::max(),
                             std::numeric_limits<int64_t>::min()};
  return choices[pick(rng, std::size(choices))];
}

const char* const kOpTypes[] = {"Conv",   "Relu",    "Add",    "Mul",       "Concat", "Reshape", "Transpose", "MaxPool",
                                "Resize", "Sigmoid", "Gemm",   "Softmax",   "Pad",    "Slice",   "Identity",  "Split",
                                "Sub",    "Div",     "MatMul", "Unsqueeze", "Gather", "Clip",    "NoSuchOp"};

// One random corruption of the model; returns what it did, for the failure message.
std::string mutate(onnx::ModelProto& model, Rng& rng) {
  onnx::GraphProto& graph = *model.mutable_graph();
  // Every value name, so wiring changes pick real ones mostly.
  std::vector<std::string> names;
  for (const auto& t : graph.initializer()) names.push_back(t.name());
  for (const auto& node : graph.node()) {
    for (const auto& output : node.output()) names.push_back(output);
  }
  for (const auto& input : graph.input()) names.push_back(input.name());
  const auto any_name = [&]() -> std::string {
    const int64_t r = pick(rng, 10);
    if (r == 0) return "";
    if (r == 1) return "no_such_value";
    return names.empty() ? "x" : names[static_cast<size_t>(pick(rng, static_cast<int64_t>(names.size())))];
  };
  const int nodes = graph.node_size(), initializers = graph.initializer_size();
  switch (pick(rng, 12)) {
    case 0: {  // an initializer's dimension
      if (initializers == 0) return "none";
      onnx::TensorProto& t = *graph.mutable_initializer(static_cast<int>(pick(rng, initializers)));
      if (t.dims_size() == 0) {
        t.add_dims(odd_integer(rng, 1));
        return "dim added to " + t.name();
      }
      const int d = static_cast<int>(pick(rng, t.dims_size()));
      t.set_dims(d, odd_integer(rng, t.dims(d)));
      return "dim of " + t.name();
    }
    case 1: {  // an initializer's element type
      if (initializers == 0) return "none";
      onnx::TensorProto& t = *graph.mutable_initializer(static_cast<int>(pick(rng, initializers)));
      const int types[] = {0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 16, 999, -3};
      t.set_data_type(types[pick(rng, std::size(types))]);
      return "type of " + t.name();
    }
    case 2: {  // an initializer's data cut short or grown
      if (initializers == 0) return "none";
      onnx::TensorProto& t = *graph.mutable_initializer(static_cast<int>(pick(rng, initializers)));
      if (t.has_raw_data()) {
        std::string raw = t.raw_data();
        raw.resize(static_cast<size_t>(pick(rng, static_cast<int64_t>(raw.size()) + 9)));
        t.set_raw_data(raw);
      } else if (t.float_data_size() > 0) {
        t.mutable_float_data()->Truncate(static_cast<int>(pick(rng, t.float_data_size())));
      } else {
        t.add_int64_data(7);
      }
      return "data of " + t.name();
    }
    case 3: {  // a node's op type
      if (nodes == 0) return "none";
      onnx::NodeProto& node = *graph.mutable_node(static_cast<int>(pick(rng, nodes)));
      node.set_op_type(kOpTypes[pick(rng, std::size(kOpTypes))]);
      return "op of " + node.name() + " to " + node.op_type();
    }
    case 4: {  // a node's input rewired
      if (nodes == 0) return "none";
      onnx::NodeProto& node = *graph.mutable_node(static_cast<int>(pick(rng, nodes)));
      if (node.input_size() == 0) return "none";
      node.set_input(static_cast<int>(pick(rng, node.input_size())), any_name());
      return "input of " + node.name();
    }
    case 5: {  // an input removed or one added
      if (nodes == 0) return "none";
      onnx::NodeProto& node = *graph.mutable_node(static_cast<int>(pick(rng, nodes)));
      if (node.input_size() > 0 && pick(rng, 2) == 0) {
        node.mutable_input()->RemoveLast();
        return "input removed from " + node.name();
      }
      node.add_input(any_name());
      return "input added to " + node.name();
    }
    case 6: {  // an integer attribute's value, or its list's length
      if (nodes == 0) return "none";
      onnx::NodeProto& node = *graph.mutable_node(static_cast<int>(pick(rng, nodes)));
      if (node.attribute_size() == 0) return "none";
      onnx::AttributeProto& a = *node.mutable_attribute(static_cast<int>(pick(rng, node.attribute_size())));
      if (a.ints_size() > 0) {
        if (pick(rng, 3) == 0) {
          a.add_ints(odd_integer(rng, 1));
        } else {
          const int i = static_cast<int>(pick(rng, a.ints_size()));
          a.set_ints(i, odd_integer(rng, a.ints(i)));
        }
      } else if (a.has_i()) {
        a.set_i(odd_integer(rng, a.i()));
      } else if (a.has_f()) {
        const float values[] = {0.0f, -1.0f, 1e30f, std::numeric_limits<float>::quiet_NaN(),
                                std::numeric_limits<float>::infinity()};
        a.set_f(values[pick(rng, std::size(values))]);
      } else {
        a.set_type(static_cast<onnx::AttributeProto::AttributeType>(pick(rng, 15)));
      }
      return "attribute " + a.name() + " of " + node.name();
    }
    case 7: {  // an attribute dropped, or a strange one added
      if (nodes == 0) return "none";
      onnx::NodeProto& node = *graph.mutable_node(static_cast<int>(pick(rng, nodes)));
      if (node.attribute_size() > 0 && pick(rng, 2) == 0) {
        node.mutable_attribute()->DeleteSubrange(static_cast<int>(pick(rng, node.attribute_size())), 1);
        return "attribute removed from " + node.name();
      }
      onnx::AttributeProto& a = *node.add_attribute();
      const char* const keys[] = {"axis", "perm", "pads", "strides", "group", "mode", "kernel_shape", "bogus"};
      a.set_name(keys[pick(rng, std::size(keys))]);
      a.set_type(onnx::AttributeProto::INTS);
      a.add_ints(odd_integer(rng, 2));
      return "attribute added to " + node.name();
    }
    case 8: {  // the graph input's shape
      if (graph.input_size() == 0) return "none";
      onnx::TensorShapeProto* shape = graph.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
      if (shape->dim_size() == 0 || pick(rng, 4) == 0) {
        shape->add_dim()->set_dim_value(odd_integer(rng, 1));
        return "input dim added";
      }
      const int d = static_cast<int>(pick(rng, shape->dim_size()));
      shape->mutable_dim(d)->set_dim_value(odd_integer(rng, shape->dim(d).dim_value()));
      return "input dim";
    }
    case 9: {  // a node removed
      if (nodes == 0) return "none";
      graph.mutable_node()->DeleteSubrange(static_cast<int>(pick(rng, nodes)), 1);
      return "node removed";
    }
    case 10: {  // two nodes swapped (topological order broken, or not)
      if (nodes < 2) return "none";
      graph.mutable_node()->SwapElements(static_cast<int>(pick(rng, nodes)), static_cast<int>(pick(rng, nodes)));
      return "nodes swapped";
    }
    default: {  // an output renamed
      if (nodes == 0) return "none";
      onnx::NodeProto& node = *graph.mutable_node(static_cast<int>(pick(rng, nodes)));
      if (node.output_size() == 0) return "none";
      node.set_output(static_cast<int>(pick(rng, node.output_size())), any_name());
      return "output of " + node.name();
    }
  }
}

// Whether every value's known shape is modest enough to run (a corrupted model may legally ask
// for a huge tensor; the importer's size limit, not this test, is what guards memory there).
bool modest(const Graph& graph) {
  for (const Value& value : graph.values()) {
    for (int64_t dim : value.desc.shape) {
      if (dim < 0) return false;
    }
    if (value.desc.numel() > (int64_t{1} << 24)) return false;
  }
  return true;
}

// How one corrupted model fared: loaded (and, modest shapes, ran on zeros), or the first error.
struct Outcome {
  bool loaded = false;
  std::string error;  // refused: the Status's message, which must say something
};

Outcome load_and_run(const std::string& bytes) {
  const auto refused = [](const Status& status) { return Outcome{false, status.message()}; };
  Result<std::shared_ptr<Graph>> graph = import_onnx_bytes(bytes, "");
  if (!graph.is_ok()) return refused(graph.status());
  Result<std::vector<PassReport>> passes = optimize_graph(**graph);
  if (!passes.is_ok()) return refused(passes.status());
  if (!modest(**graph)) return {true, ""};
  Result<Executor> executor = Executor::create(*graph);
  if (!executor.is_ok()) return refused(executor.status());
  std::vector<Tensor> inputs;
  for (ValueId input : (*graph)->inputs()) {
    const TensorDesc& desc = (*graph)->value(input).desc;
    inputs.push_back(Tensor::zeros(desc.dtype, desc.shape));
  }
  Result<std::vector<Tensor>> outputs = executor->run(inputs);
  if (!outputs.is_ok()) return refused(outputs.status());
  return {true, ""};
}

void fuzz_model(const std::filesystem::path& path, uint64_t seed, int structured, int byte_level) {
  const std::string original = read_file(path);
  onnx::ModelProto base;
  REQUIRE(base.ParseFromString(original));
  Rng rng(seed);
  int imported = 0, refused = 0;
  for (int i = 0; i < structured; ++i) {
    onnx::ModelProto model = base;
    std::string what;
    const int64_t edits = 1 + pick(rng, 3);
    for (int64_t e = 0; e < edits; ++e) what += (e > 0 ? "; " : "") + mutate(model, rng);
    CAPTURE(seed);
    CAPTURE(i);
    CAPTURE(what);
    const Outcome outcome = load_and_run(model.SerializeAsString());
    (outcome.loaded ? imported : refused)++;
    if (!outcome.loaded) CHECK_FALSE(outcome.error.empty());
  }
  for (int i = 0; i < byte_level; ++i) {
    std::string bytes = original;
    const int64_t kind = pick(rng, 3);
    if (kind == 0) {  // bytes overwritten
      for (int64_t flips = 1 + pick(rng, 16); flips > 0; --flips) {
        bytes[static_cast<size_t>(pick(rng, static_cast<int64_t>(bytes.size())))] = static_cast<char>(pick(rng, 256));
      }
    } else if (kind == 1) {  // cut short
      bytes.resize(static_cast<size_t>(pick(rng, static_cast<int64_t>(bytes.size()))));
    } else {  // bytes inserted
      bytes.insert(static_cast<size_t>(pick(rng, static_cast<int64_t>(bytes.size()))),
                   std::string(static_cast<size_t>(1 + pick(rng, 8)), static_cast<char>(pick(rng, 256))));
    }
    CAPTURE(seed);
    CAPTURE(i);
    const Outcome outcome = load_and_run(bytes);
    (outcome.loaded ? imported : refused)++;
    if (!outcome.loaded) CHECK_FALSE(outcome.error.empty());
  }
  MESSAGE(path.filename().string(), ": ", imported, " corrupted models loaded and ran (or were too large to run), ",
          refused, " refused with an error");
  CHECK(refused > 0);  // the corruptions do reach the checks
}

}  // namespace

TEST_CASE("fuzz: corrupted BlazeFace models load and run, or are refused with an error") {
  ASSET_OR_SKIP(front, "models/blazeface_front_128.onnx");
  fuzz_model(front, 1, case_count(400), case_count(150));
}

TEST_CASE("fuzz: corrupted YOLOX-nano models load and run, or are refused with an error") {
  ASSET_OR_SKIP(yolox, "models/yolox_nano.onnx");
  fuzz_model(yolox, 2, case_count(120), case_count(40));
}
