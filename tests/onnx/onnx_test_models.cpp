#include "tests/onnx/onnx_test_models.h"

#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <random>

#include <onnx/shape_inference/implementation.h>

#include "runtime/op_table.h"

namespace edgefuse::test {

OnnxModelBuilder::OnnxModelBuilder(int opset) {
  model_.set_ir_version(7);
  model_.set_producer_name("edgefuse-test");
  onnx::OperatorSetIdProto* op_set = model_.add_opset_import();
  op_set->set_domain("");
  op_set->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

onnx::ValueInfoProto* OnnxModelBuilder::input(const std::string& name, const std::vector<int64_t>& dims,
                                              int32_t elem_type) {
  onnx::ValueInfoProto* info = graph().add_input();
  info->set_name(name);
  onnx::TypeProto::Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0) {
      shape->add_dim()->set_dim_param("N");
    } else {
      shape->add_dim()->set_dim_value(d);
    }
  }
  return info;
}

onnx::ValueInfoProto* OnnxModelBuilder::output(const std::string& name, int32_t elem_type) {
  onnx::ValueInfoProto* info = graph().add_output();
  info->set_name(name);
  info->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  return info;
}

onnx::ValueInfoProto* OnnxModelBuilder::output(const std::string& name, int32_t elem_type,
                                               const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* info = output(name, elem_type);
  onnx::TensorShapeProto* shape = info->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  return info;
}

onnx::TensorProto* OnnxModelBuilder::initializer(const std::string& name, const std::vector<int64_t>& dims,
                                                 const std::vector<float>& values) {
  onnx::TensorProto* tensor = graph().add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->add_dims(d);
  for (float v : values) tensor->add_float_data(v);
  return tensor;
}

onnx::TensorProto* OnnxModelBuilder::initializer_i64(const std::string& name, const std::vector<int64_t>& dims,
                                                     const std::vector<int64_t>& values) {
  onnx::TensorProto* tensor = graph().add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) tensor->add_dims(d);
  for (int64_t v : values) tensor->add_int64_data(v);
  return tensor;
}

onnx::NodeProto* OnnxModelBuilder::node(const std::string& op_type, const std::vector<std::string>& inputs,
                                        const std::vector<std::string>& outputs, const std::string& name) {
  onnx::NodeProto* node = graph().add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const std::string& in : inputs) node->add_input(in);
  for (const std::string& out : outputs) node->add_output(out);
  return node;
}

// ONNX 1.12's checker wants a shape on every graph output; tests declare outputs by name and type
// only, so the shapes come from ONNX's shape inference (lenient: outputs it cannot infer stay bare).
// Like the importer, it only runs inference on models our own validation accepts: hostile
// attributes crash it (a zero stride divides by zero).
std::string OnnxModelBuilder::bytes() const {
  if (!model_.has_graph()) return model_.SerializeAsString();
  const OnnxImportOptions no_onnx_checks{.run_checker = false, .run_shape_inference = false};
  if (!import_onnx_bytes(model_.SerializeAsString(), "", no_onnx_checks).is_ok()) return model_.SerializeAsString();
  onnx::ModelProto inferred = model_;
  try {
    onnx::shape_inference::InferShapes(inferred);
  } catch (const std::exception&) {
    return model_.SerializeAsString();
  }
  onnx::ModelProto completed = model_;
  for (onnx::ValueInfoProto& output : *completed.mutable_graph()->mutable_output()) {
    if (output.type().tensor_type().has_shape()) continue;
    for (const onnx::ValueInfoProto& info : inferred.graph().output()) {
      if (info.name() == output.name() && info.type().tensor_type().has_shape()) {
        *output.mutable_type()->mutable_tensor_type()->mutable_shape() = info.type().tensor_type().shape();
      }
    }
  }
  return completed.SerializeAsString();
}

namespace {
onnx::AttributeProto* add_attribute(onnx::NodeProto* node, const std::string& name,
                                    onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(type);
  return attr;
}
}  // namespace

void set_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  add_attribute(node, name, onnx::AttributeProto::INT)->set_i(value);
}
void set_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* attr = add_attribute(node, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}
void set_float(onnx::NodeProto* node, const std::string& name, float value) {
  add_attribute(node, name, onnx::AttributeProto::FLOAT)->set_f(value);
}
void set_floats(onnx::NodeProto* node, const std::string& name, const std::vector<float>& values) {
  onnx::AttributeProto* attr = add_attribute(node, name, onnx::AttributeProto::FLOATS);
  for (float v : values) attr->add_floats(v);
}
void set_string(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  add_attribute(node, name, onnx::AttributeProto::STRING)->set_s(value);
}

Result<std::shared_ptr<Graph>> import_model(const OnnxModelBuilder& builder, const OnnxImportOptions& options) {
  return import_onnx_bytes(builder.bytes(), "", options);
}

std::map<std::string, int> count_ops(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const Node& node : graph.nodes()) ++counts[std::string(op_name(node.op))];
  return counts;
}

const Node& only_node(const Graph& graph, OpKind op) {
  const Node* found = nullptr;
  int count = 0;
  for (const Node& node : graph.nodes()) {
    if (node.op == op) {
      found = &node;
      ++count;
    }
  }
  REQUIRE_MESSAGE(count == 1, "expected one ", op_name(op), " node, found ", count);
  return *found;
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  std::random_device seed;
  path_ = std::filesystem::temp_directory_path() /
          ("edgefuse_onnx_test_" + std::to_string(seed()) + "_" + std::to_string(counter++));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code error;
  std::filesystem::remove_all(path_, error);
}

std::filesystem::path TempDir::write(const std::string& name, const std::string& bytes) const {
  const std::filesystem::path file = path_ / name;
  std::ofstream out(file, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return file;
}

}  // namespace edgefuse::test

namespace edgefuse::test {

bool error_mentions(const Status& status, StatusCode code, const std::string& needle) {
  return !status.is_ok() && status.code() == code && status.message().find(needle) != std::string::npos;
}

}  // namespace edgefuse::test
