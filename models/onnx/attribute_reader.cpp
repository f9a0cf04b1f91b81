#include "models/onnx/attribute_reader.h"

#include <utility>

#include "models/onnx/tensor_proto.h"

namespace edgefuse {

namespace {

using onnx::AttributeProto;

std::string kind_name(AttributeProto::AttributeType kind) {
  switch (kind) {
    case AttributeProto::INT:
      return "int";
    case AttributeProto::FLOAT:
      return "float";
    case AttributeProto::STRING:
      return "string";
    case AttributeProto::INTS:
      return "ints";
    case AttributeProto::FLOATS:
      return "floats";
    case AttributeProto::STRINGS:
      return "strings";
    case AttributeProto::TENSOR:
      return "tensor";
    case AttributeProto::TENSORS:
      return "tensors";
    case AttributeProto::GRAPH:
      return "graph";
    case AttributeProto::GRAPHS:
      return "graphs";
    case AttributeProto::SPARSE_TENSOR:
      return "sparse tensor";
    case AttributeProto::SPARSE_TENSORS:
      return "sparse tensors";
    case AttributeProto::TYPE_PROTO:
      return "type";
    case AttributeProto::TYPE_PROTOS:
      return "types";
    default:
      return "undefined";
  }
}

}  // namespace

std::string ints_to_string(const std::vector<int64_t>& values) {
  return shape_to_string(values);
}

AttributeReader::AttributeReader(const onnx::NodeProto& node, std::string context, std::string model_dir)
    : node_(node), context_(std::move(context)), model_dir_(std::move(model_dir)) {}

Status AttributeReader::validate() const {
  std::set<std::string_view> seen;
  for (const AttributeProto& attr : node_.attribute()) {
    if (!seen.insert(attr.name()).second) {
      return invalid_model(context_, ": attribute '", attr.name(), "' is given more than once");
    }
    if (!attr.ref_attr_name().empty()) {
      return unsupported(context_, ": attribute '", attr.name(), "' refers to a function attribute");
    }
  }
  return Status::ok();
}

const AttributeProto* AttributeReader::find(std::string_view name) const {
  for (const AttributeProto& attr : node_.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

Result<const AttributeProto*> AttributeReader::typed(std::string_view name, AttributeProto::AttributeType kind) {
  const AttributeProto* attr = find(name);
  if (attr == nullptr) return static_cast<const AttributeProto*>(nullptr);
  consumed_.emplace(name);
  if (attr->type() != kind) {
    return invalid_model(context_, ": attribute '", name, "' must be ", kind_name(kind), ", got ",
                         kind_name(attr->type()));
  }
  return attr;
}

Result<std::optional<int64_t>> AttributeReader::find_int(std::string_view name) {
  EF_ASSIGN_OR_RETURN(const AttributeProto* attr, typed(name, AttributeProto::INT));
  if (attr == nullptr) return std::optional<int64_t>();
  return std::optional<int64_t>(attr->i());
}

Result<std::optional<float>> AttributeReader::find_float(std::string_view name) {
  EF_ASSIGN_OR_RETURN(const AttributeProto* attr, typed(name, AttributeProto::FLOAT));
  if (attr == nullptr) return std::optional<float>();
  return std::optional<float>(attr->f());
}

Result<std::optional<std::string>> AttributeReader::find_string(std::string_view name) {
  EF_ASSIGN_OR_RETURN(const AttributeProto* attr, typed(name, AttributeProto::STRING));
  if (attr == nullptr) return std::optional<std::string>();
  return std::optional<std::string>(attr->s());
}

Result<std::optional<std::vector<int64_t>>> AttributeReader::find_ints(std::string_view name) {
  EF_ASSIGN_OR_RETURN(const AttributeProto* attr, typed(name, AttributeProto::INTS));
  if (attr == nullptr) return std::optional<std::vector<int64_t>>();
  return std::optional<std::vector<int64_t>>(std::vector<int64_t>(attr->ints().begin(), attr->ints().end()));
}

Result<std::optional<std::vector<float>>> AttributeReader::find_floats(std::string_view name) {
  EF_ASSIGN_OR_RETURN(const AttributeProto* attr, typed(name, AttributeProto::FLOATS));
  if (attr == nullptr) return std::optional<std::vector<float>>();
  return std::optional<std::vector<float>>(std::vector<float>(attr->floats().begin(), attr->floats().end()));
}

Result<std::optional<Tensor>> AttributeReader::find_tensor(std::string_view name) {
  EF_ASSIGN_OR_RETURN(const AttributeProto* attr, typed(name, AttributeProto::TENSOR));
  if (attr == nullptr) return std::optional<Tensor>();
  Result<Tensor> tensor = tensor_from_proto(attr->t(), model_dir_);
  if (!tensor.is_ok()) return tensor.status().with_context(make_message(context_, ": attribute '", name, "'"));
  return std::optional<Tensor>(std::move(tensor).value());
}

Result<int64_t> AttributeReader::get_int(std::string_view name, int64_t fallback) {
  EF_ASSIGN_OR_RETURN(std::optional<int64_t> value, find_int(name));
  return value.value_or(fallback);
}

Result<float> AttributeReader::get_float(std::string_view name, float fallback) {
  EF_ASSIGN_OR_RETURN(std::optional<float> value, find_float(name));
  return value.value_or(fallback);
}

Result<std::string> AttributeReader::get_string(std::string_view name, std::string_view fallback) {
  EF_ASSIGN_OR_RETURN(std::optional<std::string> value, find_string(name));
  return value ? *value : std::string(fallback);
}

Result<bool> AttributeReader::get_flag(std::string_view name, bool fallback) {
  EF_ASSIGN_OR_RETURN(std::optional<int64_t> value, find_int(name));
  if (!value) return fallback;
  if (*value != 0 && *value != 1)
    return invalid_model(context_, ": attribute '", name, "' must be 0 or 1, got ", *value);
  return *value == 1;
}

Status AttributeReader::finish() const {
  for (const AttributeProto& attr : node_.attribute()) {
    if (consumed_.find(attr.name()) == consumed_.end()) {
      return unsupported(context_, ": attribute '", attr.name(), "' is not supported");
    }
  }
  return Status::ok();
}

}  // namespace edgefuse
