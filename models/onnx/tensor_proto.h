// TensorProto <-> runtime tensors: element type mapping and validated conversion.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <onnx/onnx_pb.h>

#include "runtime/tensor.h"

namespace edgefuse {

// The DType of an ONNX element type (TensorProto::DataType), or nullopt when we have none.
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
// ONNX's name of an element type ("FLOAT", "BFLOAT16", ...), "type <n>" when unknown.
std::string onnx_type_name(int32_t onnx_type);

// TensorProto -> Tensor (raw_data or typed fields; external data resolved under model_dir with the
// rules of external_data.h). Checks dims (non-negative, size within limits), that exactly one data
// source is present and that its size matches the dims. Errors name the tensor.
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& model_dir);

}  // namespace edgefuse
