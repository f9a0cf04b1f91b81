// Reshape, Flatten, Squeeze, Unsqueeze (new description, same bytes), Shape, ConstantOfShape and
// Constant. Shape operands (Reshape's shape, axes) are read from constant inputs and untrusted.
#include <algorithm>
#include <cstring>

#include "runtime/ops/axes.h"
#include "runtime/ops/ops.h"

namespace edgefuse {

// ---- Reshape, Flatten, Squeeze, Unsqueeze ----------------------------------------------------

Status infer_reshape(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_RETURN_IF_ERROR(require_input(inputs, 0, "data"));
  EF_RETURN_IF_ERROR(require_input(inputs, 1, "shape"));
  const Tensor& data = *inputs[0];
  EF_ASSIGN_OR_RETURN(const std::vector<int64_t> requested, read_constant_ints(*inputs[1], "shape"));
  const bool allow_zero = node.attrs.get_int("allowzero", 0) != 0;
  const auto mismatch = [&] {
    return invalid_argument("cannot reshape ", shape_to_string(data.shape()), " (", data.numel(), " elements) to ",
                            shape_to_string(requested));
  };
  Shape shape(requested.size());
  int inferred_axis = -1;
  int64_t known = 1;  // product of the nonzero dims other than -1
  bool has_zero = false;
  for (size_t d = 0; d < requested.size(); ++d) {
    int64_t dim = requested[d];
    if (dim == 0 && !allow_zero) {
      if (d >= data.shape().size()) {
        return invalid_argument("shape ", shape_to_string(requested), " copies dim ", d, " (0) but the input has rank ",
                                data.rank());
      }
      dim = data.shape()[d];
    } else if (dim == -1) {
      if (inferred_axis >= 0) return invalid_argument("shape ", shape_to_string(requested), " has more than one -1");
      inferred_axis = static_cast<int>(d);
      continue;
    } else if (dim < 0) {
      return invalid_argument("shape ", shape_to_string(requested), " has negative dim ", dim);
    }
    shape[d] = dim;
    has_zero = has_zero || dim == 0;
    if (dim != 0 && __builtin_mul_overflow(known, dim, &known)) return mismatch();
  }
  if (has_zero) known = 0;
  if (inferred_axis >= 0) {
    if (allow_zero && has_zero) {
      return invalid_argument("shape ", shape_to_string(requested), " has both -1 and 0 with allowzero=1");
    }
    if (known == 0 || data.numel() % known != 0) return mismatch();
    shape[static_cast<size_t>(inferred_axis)] = data.numel() / known;
  } else if (known != data.numel()) {
    return mismatch();
  }
  outputs = {TensorDesc{data.dtype(), std::move(shape)}};
  return Status::ok();
}

Status infer_flatten(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_RETURN_IF_ERROR(require_input(inputs, 0, "input"));
  const Tensor& in = *inputs[0];
  // Flatten's axis is in [-rank, rank]: rank puts every dim in the first output dim.
  int64_t axis = node.attrs.get_int("axis", 1);
  if (axis < -static_cast<int64_t>(in.rank()) || axis > in.rank()) {
    return invalid_argument("axis ", axis, " out of range for rank ", in.rank(), " (valid: [", -in.rank(), ", ",
                            in.rank(), "])");
  }
  if (axis < 0) axis += in.rank();
  const auto split = in.shape().begin() + axis;
  const int64_t rows = shape_numel(std::span<const int64_t>(in.shape().begin(), split));
  const int64_t columns = shape_numel(std::span<const int64_t>(split, in.shape().end()));
  outputs = {TensorDesc{in.dtype(), Shape{rows, columns}}};
  return Status::ok();
}

Status infer_squeeze(const Node&, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_RETURN_IF_ERROR(require_input(inputs, 0, "data"));
  const Tensor& data = *inputs[0];
  std::vector<bool> removed(data.shape().size(), false);
  if (inputs.size() > 1 && inputs[1] != nullptr) {
    EF_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, read_constant_ints(*inputs[1], "axes"));
    EF_ASSIGN_OR_RETURN(const std::vector<int> normalized, normalize_axes(axes, data.rank(), "squeeze axis"));
    for (int axis : normalized) {
      if (data.dim(axis) != 1) {
        return invalid_argument("cannot squeeze axis ", axis, " of size ", data.dim(axis), " in ",
                                shape_to_string(data.shape()));
      }
      removed[static_cast<size_t>(axis)] = true;
    }
  } else {
    for (size_t d = 0; d < removed.size(); ++d) removed[d] = data.shape()[d] == 1;
  }
  Shape shape;
  for (size_t d = 0; d < removed.size(); ++d) {
    if (!removed[d]) shape.push_back(data.shape()[d]);
  }
  outputs = {TensorDesc{data.dtype(), std::move(shape)}};
  return Status::ok();
}

Status infer_unsqueeze(const Node&, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_RETURN_IF_ERROR(require_input(inputs, 0, "data"));
  EF_RETURN_IF_ERROR(require_input(inputs, 1, "axes"));
  const Tensor& data = *inputs[0];
  EF_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, read_constant_ints(*inputs[1], "axes"));
  const int out_rank = data.rank() + static_cast<int>(axes.size());
  // Axes count in the output's rank, so each names where a new 1 goes.
  EF_ASSIGN_OR_RETURN(const std::vector<int> normalized, normalize_axes(axes, out_rank, "unsqueeze axis"));
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int axis : normalized) inserted[static_cast<size_t>(axis)] = true;
  Shape shape;
  size_t next = 0;
  for (int d = 0; d < out_rank; ++d) shape.push_back(inserted[static_cast<size_t>(d)] ? 1 : data.shape()[next++]);
  outputs = {TensorDesc{data.dtype(), std::move(shape)}};
  return Status::ok();
}

Status reference_copy_input(const KernelArgs& args) {
  const Tensor& in = *args.inputs[0];
  Tensor& out = *args.outputs[0];
  EF_ASSERT(in.nbytes() == out.nbytes(), "copy ", in.desc().to_string(), " to ", out.desc().to_string());
  if (out.nbytes() > 0) std::memcpy(out.raw_data(), in.raw_data(), out.nbytes());
  return Status::ok();
}

// ---- Shape ----------------------------------------------------------------------------------

namespace {

// The [start, end) range of dims Shape reports (opset 15): negatives count from the end, then clamp to [0, rank].
std::pair<int64_t, int64_t> shape_range(const Node& node, int rank) {
  const auto clamp_dim = [rank](int64_t index) {
    if (index < 0) index += rank;
    return std::clamp<int64_t>(index, 0, rank);
  };
  const int64_t start = clamp_dim(node.attrs.get_int("start", 0));
  const int64_t end = clamp_dim(node.attrs.get_int("end", rank));
  return {start, std::max(start, end)};
}

}  // namespace

Status infer_shape(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs) {
  EF_RETURN_IF_ERROR(require_input(inputs, 0, "data"));
  const auto [start, end] = shape_range(node, inputs[0]->rank());
  outputs = {TensorDesc{DType::kI64, Shape{end - start}}};
  return Status::ok();
}

Status reference_shape(const KernelArgs& args) {
  const Tensor& in = *args.inputs[0];
  const auto [start, end] = shape_range(args.node, in.rank());
  int64_t* out = args.outputs[0]->data<int64_t>();
  for (int64_t d = start; d < end; ++d) out[d - start] = in.shape()[static_cast<size_t>(d)];
  return Status::ok();
}

// ---- ConstantOfShape ------------------------------------------------------------------------

namespace {

// The fill value: the one-element tensor attribute 'value', default f32 0.
Result<Tensor> fill_value(const Node& node) {
  const Tensor* value = node.attrs.get_tensor("value");
  if (value == nullptr) return Tensor::scalar<float>(0.0f);
  if (value->numel() != 1 || !value->has_data()) {
    return invalid_model("attribute 'value' must hold one element, got ", value->desc().to_string());
  }
  return *value;
}

}  // namespace

Status infer_constant_of_shape(const Node& node, std::span<const Tensor* const> inputs,
                               std::vector<TensorDesc>& outputs) {
  EF_RETURN_IF_ERROR(require_input(inputs, 0, "input"));
  EF_ASSIGN_OR_RETURN(const Tensor value, fill_value(node));
  EF_ASSIGN_OR_RETURN(Shape shape, read_constant_ints(*inputs[0], "input"));
  for (int64_t dim : shape) {
    if (dim < 0) return invalid_argument("shape ", shape_to_string(shape), " has negative dim ", dim);
  }
  EF_RETURN_IF_ERROR(validate_shape(shape, dtype_size(value.dtype())));
  outputs = {TensorDesc{value.dtype(), std::move(shape)}};
  return Status::ok();
}

Status reference_constant_of_shape(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(const Tensor value, fill_value(args.node));
  Tensor& out = *args.outputs[0];
  const size_t size = dtype_size(out.dtype());
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(dst + static_cast<size_t>(i) * size, value.raw_data(), size);
  return Status::ok();
}

// ---- Constant -------------------------------------------------------------------------------

namespace {

// The constant's value from whichever one of ONNX's value attributes the node carries.
Result<Tensor> constant_value(const Node& node) {
  const Attributes& attrs = node.attrs;
  const int given = static_cast<int>(attrs.has("value")) + static_cast<int>(attrs.has("value_float")) +
                    static_cast<int>(attrs.has("value_floats")) + static_cast<int>(attrs.has("value_int")) +
                    static_cast<int>(attrs.has("value_ints"));
  if (given != 1) {
    return invalid_model("Constant needs exactly one of value, value_float, value_floats, value_int, value_ints; got ",
                         given);
  }
  if (const Tensor* value = attrs.get_tensor("value")) {
    if (!value->has_data()) return invalid_model("attribute 'value' has no data");
    return *value;
  }
  if (attrs.has("value_float")) return Tensor::scalar<float>(attrs.get_float("value_float", 0.0f));
  if (attrs.has("value_int")) return Tensor::scalar<int64_t>(attrs.get_int("value_int", 0));
  if (attrs.has("value_floats")) {
    const std::vector<float> values = attrs.get_floats("value_floats");
    return Tensor::from_vector<float>({static_cast<int64_t>(values.size())}, values);
  }
  const std::vector<int64_t> values = attrs.get_ints("value_ints");
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values);
}

}  // namespace

Status infer_constant(const Node& node, std::span<const Tensor* const>, std::vector<TensorDesc>& outputs) {
  EF_ASSIGN_OR_RETURN(const Tensor value, constant_value(node));
  outputs = {value.desc()};
  return Status::ok();
}

Status reference_constant(const KernelArgs& args) {
  EF_ASSIGN_OR_RETURN(const Tensor value, constant_value(args.node));
  Tensor& out = *args.outputs[0];
  EF_ASSERT(out.desc() == value.desc());
  if (out.nbytes() > 0) std::memcpy(out.raw_data(), value.raw_data(), out.nbytes());
  return Status::ok();
}

}  // namespace edgefuse
