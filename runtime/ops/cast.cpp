// Cast: converts to the dtype named by attribute `to`, an ONNX TensorProto data type number.
//
// Conversions: integers to integers wrap (two's complement); floats to integers truncate toward
// zero and saturate (NaN -> 0, +-inf and out-of-range values -> the type's min or max, where
// ONNX leaves them undefined); anything to bool is value != 0 (NaN -> true); bool is 0 or 1;
// f16 converts through f32 (f64 -> f16 therefore rounds twice).
#include <optional>
#include <string_view>

#include "runtime/ops/numeric.h"
#include "runtime/ops/ops.h"

namespace edgefuse {

namespace {

std::string_view onnx_type_name(int64_t onnx_type) {
  static constexpr std::string_view kNames[] = {
      "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",   "INT16",
      "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",  "DOUBLE",
      "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN",
      "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4",     "FLOAT4E2M1"};
  if (onnx_type < 0 || onnx_type >= static_cast<int64_t>(std::size(kNames))) return "unknown";
  return kNames[onnx_type];
}

std::optional<DType> dtype_from_onnx_type(int64_t onnx_type) {
  switch (onnx_type) {
    case 1:
      return DType::kF32;
    case 2:
      return DType::kU8;
    case 3:
      return DType::kI8;
    case 6:
      return DType::kI32;
    case 7:
      return DType::kI64;
    case 9:
      return DType::kBool;
    case 10:
      return DType::kF16;
    case 11:
      return DType::kF64;
    default:
      return std::nullopt;
  }
}

template <typename To, typename From>
To convert(From value) {
  if constexpr (std::is_same_v<From, Half> || std::is_same_v<To, Half> || std::is_same_v<To, bool> ||
                (kIsFloatLike<From> && kIsInteger<To>)) {
    return from_double<To>(as_double(value));
  } else {
    // Integer or bool sources, and float-to-float: the plain conversion is defined (C++20
    // integer conversions are modular).
    return static_cast<To>(value);
  }
}

}  // namespace

Status infer_cast(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  if (!node.attrs.has("to")) return invalid_model("Cast needs attribute 'to'");
  const int64_t to = node.attrs.get_int("to", 0);
  const std::optional<DType> dtype = dtype_from_onnx_type(to);
  if (!dtype) return unsupported("Cast to ONNX type ", to, " (", onnx_type_name(to), ")");
  outputs.assign(1, TensorDesc{*dtype, inputs[0]->shape()});
  return Status::ok();
}

Status reference_cast(const KernelArgs& args) {
  const Tensor& x = *args.inputs[0];
  Tensor& y = *args.outputs[0];
  visit_dtype(x.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    visit_dtype(y.dtype(), [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* in = x.data<From>();
      To* out = y.data<To>();
      for (int64_t i = 0; i < x.numel(); ++i) out[i] = convert<To>(in[i]);
    });
  });
  return Status::ok();
}

}  // namespace edgefuse
