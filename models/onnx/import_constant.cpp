// Constant nodes: their value becomes an initializer, so no Constant node reaches the IR.
#include "models/onnx/op_importers.h"

namespace edgefuse {

Result<Tensor> constant_node_value(NodeImportContext& ctx) {
  AttributeReader& attrs = ctx.attrs();
  for (const char* name : {"sparse_value", "value_string", "value_strings"}) {
    if (attrs.has(name)) return ctx.not_supported("attribute '", name, "' is not supported");
  }
  int given = 0;
  for (const char* name : {"value", "value_float", "value_floats", "value_int", "value_ints"}) given += attrs.has(name);
  if (given != 1) return ctx.invalid("a Constant needs exactly one value attribute, got ", given);

  EF_ASSIGN_OR_RETURN(std::optional<Tensor> tensor, attrs.find_tensor("value"));
  if (tensor) return std::move(*tensor);
  EF_ASSIGN_OR_RETURN(std::optional<float> value_float, attrs.find_float("value_float"));
  if (value_float) return Tensor::scalar<float>(*value_float);
  EF_ASSIGN_OR_RETURN(std::optional<int64_t> value_int, attrs.find_int("value_int"));
  if (value_int) return Tensor::scalar<int64_t>(*value_int);
  EF_ASSIGN_OR_RETURN(std::optional<std::vector<float>> floats, attrs.find_floats("value_floats"));
  if (floats) return Tensor::from_vector<float>({static_cast<int64_t>(floats->size())}, *floats);
  EF_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> ints, attrs.find_ints("value_ints"));
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(ints->size())}, *ints);
}

}  // namespace edgefuse
