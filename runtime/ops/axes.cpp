#include "runtime/ops/axes.h"

namespace edgefuse {

Status require_input(std::span<const Tensor* const> inputs, size_t index, std::string_view name) {
  if (index >= inputs.size() || inputs[index] == nullptr) return invalid_argument("input '", name, "' is required");
  return Status::ok();
}

Result<int> normalize_axis(int64_t axis, int rank, std::string_view what) {
  if (axis < -static_cast<int64_t>(rank) || axis >= rank) {
    return invalid_argument(what, " ", axis, " out of range for rank ", rank, " (valid: [", -rank, ", ", rank - 1,
                            "])");
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

Result<std::vector<int>> normalize_axes(std::span<const int64_t> axes, int rank, std::string_view what) {
  std::vector<int> normalized;
  normalized.reserve(axes.size());
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    EF_ASSIGN_OR_RETURN(int a, normalize_axis(axis, rank, what));
    if (seen[static_cast<size_t>(a)]) return invalid_argument(what, " ", axis, " repeats axis ", a);
    seen[static_cast<size_t>(a)] = true;
    normalized.push_back(a);
  }
  return normalized;
}

Result<std::vector<int64_t>> read_constant_ints(const Tensor& tensor, std::string_view name) {
  if (tensor.dtype() != DType::kI64 && tensor.dtype() != DType::kI32) {
    return invalid_argument(name, " must be i32 or i64, got ", dtype_name(tensor.dtype()));
  }
  if (tensor.rank() > 1) return invalid_argument(name, " must be 1-D, got shape ", shape_to_string(tensor.shape()));
  if (!tensor.has_data()) {
    return unsupported(name, " must be a constant (an initializer or computed from constants) to infer shapes");
  }
  return tensor.to_int64_vector();
}

}  // namespace edgefuse
