#include "models/onnx/tensor_proto.h"

#include <cstring>
#include <limits>
#include <type_traits>

#include "models/onnx/external_data.h"

namespace edgefuse {

namespace {

using onnx::TensorProto;

// Stores typed-field values into `out`, checking each fits the element type.
template <typename T, typename Source>
Status store_typed(const Source& source, Tensor& out, const std::string& name) {
  T* dst = out.data<T>();
  int64_t i = 0;
  for (const auto& v : source) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) < sizeof(v)) {
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
        return invalid_model("tensor '", name, "': value ", v, " at index ", i, " does not fit ",
                             dtype_name(out.dtype()));
      }
    }
    if constexpr (std::is_same_v<T, bool>) {
      dst[i] = v != 0;
    } else {
      dst[i] = static_cast<T>(v);
    }
    ++i;
  }
  return Status::ok();
}

// Number of values in the typed field that holds this element type, or -1 when the type has none.
int64_t typed_field_count(const TensorProto& proto, DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return proto.float_data_size();
    case DType::kF64:
      return proto.double_data_size();
    case DType::kI64:
      return proto.int64_data_size();
    case DType::kF16:
    case DType::kI8:
    case DType::kU8:
    case DType::kI32:
    case DType::kBool:
      return proto.int32_data_size();
  }
  return -1;
}

bool has_other_typed_fields(const TensorProto& proto, DType dtype) {
  const int64_t total = proto.float_data_size() + proto.double_data_size() + proto.int64_data_size() +
                        proto.int32_data_size() + proto.uint64_data_size() + proto.string_data_size();
  return total != typed_field_count(proto, dtype);
}

Status fill_from_typed_fields(const TensorProto& proto, Tensor& out, const std::string& name) {
  switch (out.dtype()) {
    case DType::kF32:
      return store_typed<float>(proto.float_data(), out, name);
    case DType::kF64:
      return store_typed<double>(proto.double_data(), out, name);
    case DType::kI64:
      return store_typed<int64_t>(proto.int64_data(), out, name);
    case DType::kI32:
      return store_typed<int32_t>(proto.int32_data(), out, name);
    case DType::kI8:
      return store_typed<int8_t>(proto.int32_data(), out, name);
    case DType::kU8:
      return store_typed<uint8_t>(proto.int32_data(), out, name);
    case DType::kBool:
      return store_typed<bool>(proto.int32_data(), out, name);
    case DType::kF16: {
      // float16 values travel as their bit patterns in int32_data.
      Half* dst = out.data<Half>();
      for (int i = 0; i < proto.int32_data_size(); ++i) {
        const int32_t bits = proto.int32_data(i);
        if (bits < 0 || bits > 0xFFFF)
          return invalid_model("tensor '", name, "': float16 bits ", bits, " out of range");
        dst[i] = Half{static_cast<uint16_t>(bits)};
      }
      return Status::ok();
    }
  }
  return Status::ok();
}

// Copies little-endian raw bytes; bools are normalised to 0/1.
void fill_from_bytes(const std::string& bytes, Tensor& out) {
  if (bytes.empty()) return;
  std::memcpy(out.raw_data(), bytes.data(), bytes.size());
  if (out.dtype() == DType::kBool) {
    auto* b = static_cast<uint8_t*>(out.raw_data());
    for (size_t i = 0; i < bytes.size(); ++i) b[i] = b[i] != 0 ? 1 : 0;
  }
}

}  // namespace

std::optional<DType> dtype_from_onnx(int32_t onnx_type) {
  switch (onnx_type) {
    case TensorProto::FLOAT:
      return DType::kF32;
    case TensorProto::FLOAT16:
      return DType::kF16;
    case TensorProto::DOUBLE:
      return DType::kF64;
    case TensorProto::INT8:
      return DType::kI8;
    case TensorProto::UINT8:
      return DType::kU8;
    case TensorProto::INT32:
      return DType::kI32;
    case TensorProto::INT64:
      return DType::kI64;
    case TensorProto::BOOL:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

std::string onnx_type_name(int32_t onnx_type) {
  if (TensorProto::DataType_IsValid(onnx_type)) {
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_type));
  }
  return make_message("type ", onnx_type);
}

Result<Tensor> tensor_from_proto(const TensorProto& proto, const std::string& model_dir) {
  const std::string& name = proto.name();
  const std::optional<DType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype) {
    return unsupported("tensor '", name, "': element type ", onnx_type_name(proto.data_type()), " is not supported");
  }
  if (proto.has_segment()) return unsupported("tensor '", name, "': segmented tensors are not supported");
  Shape shape(proto.dims().begin(), proto.dims().end());
  Status valid_shape = validate_shape(shape, dtype_size(*dtype));
  if (!valid_shape.is_ok()) return invalid_model("tensor '", name, "': ", valid_shape.message());

  // Every size is checked against the data present before anything is allocated.
  const int64_t numel = shape_numel(shape);
  const size_t nbytes = static_cast<size_t>(numel) * dtype_size(*dtype);
  const bool external = proto.has_data_location() && proto.data_location() == TensorProto::EXTERNAL;
  const int64_t typed_count = typed_field_count(proto, *dtype);
  if (has_other_typed_fields(proto, *dtype)) {
    return invalid_model("tensor '", name, "': holds values in a field that does not match its element type ",
                         onnx_type_name(proto.data_type()));
  }
  const int sources = (external ? 1 : 0) + (proto.has_raw_data() ? 1 : 0) + (typed_count > 0 ? 1 : 0);
  if (sources > 1) {
    return invalid_model("tensor '", name, "': has more than one data source (raw_data, typed values, external)");
  }

  if (external) {
    std::string bytes;
    Status read = read_external_data(proto, model_dir, nbytes, bytes);
    if (!read.is_ok()) return read.with_context(make_message("tensor '", name, "'"));
    Tensor out = Tensor::empty(*dtype, shape);
    fill_from_bytes(bytes, out);
    return out;
  }
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != nbytes) {
      return invalid_model("tensor '", name, "': raw_data has ", proto.raw_data().size(), " bytes, dims ",
                           shape_to_string(shape), " of ", dtype_name(*dtype), " need ", nbytes);
    }
    Tensor out = Tensor::empty(*dtype, shape);
    fill_from_bytes(proto.raw_data(), out);
    return out;
  }
  if (typed_count != numel) {
    return invalid_model("tensor '", name, "': has ", typed_count, " values, dims ", shape_to_string(shape), " need ",
                         numel);
  }
  Tensor out = Tensor::empty(*dtype, shape);
  EF_RETURN_IF_ERROR(fill_from_typed_fields(proto, out, name));
  return out;
}

}  // namespace edgefuse
