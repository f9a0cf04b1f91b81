#include "tests/models/onnx_graph_editor.h"

namespace edgefuse::test {

void GraphEditor::floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
  onnx::TensorProto* tensor = graph_.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->add_dims(d);
  for (float v : values) tensor->add_float_data(v);
}

void GraphEditor::ints(const std::string& name, const std::vector<int64_t>& values) {
  onnx::TensorProto* tensor = graph_.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) tensor->add_int64_data(v);
}

onnx::NodeProto* GraphEditor::node(const std::string& op, const std::vector<std::string>& inputs,
                                   const std::string& output) {
  return node(op, inputs, std::vector<std::string>{output});
}

onnx::NodeProto* GraphEditor::node(const std::string& op, const std::vector<std::string>& inputs,
                                   const std::vector<std::string>& outputs) {
  onnx::NodeProto* node = graph_.add_node();
  node->set_op_type(op);
  node->set_name(op + "_" + outputs.at(0));
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return node;
}

std::string GraphEditor::slice(const std::string& input, int64_t begin, int64_t end, int64_t axis,
                               const std::string& output) {
  ints(output + "_starts", {begin});
  ints(output + "_ends", {end});
  ints(output + "_axes", {axis});
  node("Slice", {input, output + "_starts", output + "_ends", output + "_axes"}, output);
  return output;
}

std::string GraphEditor::concat(const std::vector<std::string>& inputs, int64_t axis, const std::string& output) {
  set_int(node("Concat", inputs, output), "axis", axis);
  return output;
}

void GraphEditor::input(const std::string& name, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* info = graph_.add_input();
  info->set_name(name);
  set_dims(info, dims);
}

void GraphEditor::output(const std::string& name, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* info = graph_.add_output();
  info->set_name(name);
  set_dims(info, dims);
}

void GraphEditor::set_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void GraphEditor::set_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attribute->add_ints(v);
}

void GraphEditor::set_string(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::STRING);
  attribute->set_s(value);
}

void GraphEditor::set_dims(onnx::ValueInfoProto* info, const std::vector<int64_t>& dims) {
  onnx::TypeProto::Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->clear_dim();
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

}  // namespace edgefuse::test
